package domain

import (
	"strings"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

// Deadline bounds (seed 002, "Deadlines on questions and approvals").
const (
	MinDeadline = 60 * time.Second
	MaxDeadline = 2_592_000 * time.Second
	// MinOptions, MaxOptions and MaxOptionLen bound a question's options.
	MinOptions   = 2
	MaxOptions   = 6
	MaxOptionLen = 80
	// MaxBody bounds the text of a signal, question, answer or note.
	MaxBody = 16 << 10
)

// Hub is the actor of a resolution made at the deadline: no key or
// principal is ever named so (principal names are validated elsewhere).
const Hub = "hub"

// Kind is an inbox item's kind.
type Kind string

// The item kinds.
const (
	KindQuestion Kind = "question"
	KindApproval Kind = "approval"
	// KindEnrolRequest is an agent's self-service enrolment request,
	// decided by an admin of the tenant's root (issue 15).
	KindEnrolRequest Kind = "enrol_request"
)

// Status is where an item stands.
type Status string

// The statuses: open, then exactly one of the others.
const (
	Open     Status = "open"
	Answered Status = "answered"
	Approved Status = "approved"
	Declined Status = "declined"
	Expired  Status = "expired" // a question closed at its deadline, unanswered
)

// ParseStatusFilter checks an inbox_read status filter ("" = any).
func ParseStatusFilter(s string) error {
	switch s {
	case "", "open", "resolved", "answered", "approved", "declined", "expired":
		return nil
	}
	return errs.Invalid("status %q: want open, resolved, answered, approved, declined or expired", s)
}

// Deadline is an optional deadline with what happens at it.
type Deadline struct {
	After    time.Duration // 0: none
	OnExpiry string        // approve | decline; approvals only
}

// NewDeadline validates expires_in_seconds and on_expiry for an item of
// kind k (k "" is a signal of another kind). Refusals write nothing.
func NewDeadline(k Kind, expiresIn *int64, onExpiry string) (Deadline, error) {
	if expiresIn == nil {
		if onExpiry != "" {
			return Deadline{}, errs.Invalid("on_expiry needs expires_in_seconds: an outcome without a deadline never applies")
		}
		return Deadline{}, nil
	}
	if k == "" {
		return Deadline{}, errs.Invalid("expires_in_seconds: only a question or an approval takes a deadline")
	}
	d := time.Duration(*expiresIn) * time.Second
	if *expiresIn < int64(MinDeadline/time.Second) || *expiresIn > int64(MaxDeadline/time.Second) {
		return Deadline{}, errs.Invalid("expires_in_seconds %d is outside %d…%d", *expiresIn, int64(MinDeadline/time.Second), int64(MaxDeadline/time.Second))
	}
	switch {
	case k == KindQuestion && onExpiry != "":
		return Deadline{}, errs.Invalid("on_expiry: a question takes none; at its deadline it closes with no answer")
	case k == KindApproval && onExpiry == "":
		onExpiry = "decline" // the safe outcome
	case k == KindApproval && onExpiry != "approve" && onExpiry != "decline":
		return Deadline{}, errs.Invalid("on_expiry %q: want approve or decline", onExpiry)
	}
	return Deadline{After: d, OnExpiry: onExpiry}, nil
}

// CheckOptions validates a question's options and returns them trimmed:
// 2–6, each one line of at most 80 characters once trimmed, none blank,
// no two the same. A list outside those bounds is refused whole.
func CheckOptions(opts []string) ([]string, error) {
	if opts == nil {
		return nil, nil
	}
	if len(opts) < MinOptions || len(opts) > MaxOptions {
		return nil, errs.Invalid("options: %d given, want %d to %d (or none)", len(opts), MinOptions, MaxOptions)
	}
	out := make([]string, len(opts))
	seen := make(map[string]bool, len(opts))
	for i, o := range opts {
		t := strings.TrimSpace(o)
		switch {
		case t == "":
			return nil, errs.Invalid("options[%d] is blank", i)
		case strings.ContainsAny(t, "\r\n"):
			return nil, errs.Invalid("options[%d] is more than one line", i)
		case len([]rune(t)) > MaxOptionLen:
			return nil, errs.Invalid("options[%d] is %d characters, at most %d", i, len([]rune(t)), MaxOptionLen)
		case seen[t]:
			return nil, errs.Invalid("options[%d] %q repeats an earlier option", i, t)
		}
		seen[t], out[i] = true, t
	}
	return out, nil
}

// CheckBody refuses an empty or oversized text.
func CheckBody(field, body string) error {
	if strings.TrimSpace(body) == "" {
		return errs.Invalid("%s is required", field)
	}
	if len(body) > MaxBody {
		return errs.New(errs.LimitSize, "coordination records are short texts; knowledge goes through oml_remember", "%s is %d bytes, at most %d", field, len(body), MaxBody)
	}
	return nil
}

// Item is a question or an approval on the human.
type Item struct {
	TenantID, ID       string
	Kind               Kind
	WorkareaID, IDPath string
	AskerKeyID         string
	AskerPrincipalID   string
	AskerPrincipal     string
	Body               string
	Options            []string
	CreatedAt          time.Time
	ExpiresAt          *time.Time
	OnExpiry           string
	Status             Status
	ResolvedAt         *time.Time
	ResolvedBy         string
	ResolutionBody     string
	Expired            bool
	AnswerEventID      string
	Seq                int64
}

// ShownTo reports whether a key with this access to the item's workarea
// sees the item at all: a reader does, except an enrolment request, which
// is its admins' alone.
func (it Item) ShownTo(reader, admin bool) bool {
	return reader && (it.Kind != KindEnrolRequest || admin)
}

// RuleResolved is the rule a second resolution is refused by.
const RuleResolved = "an inbox item is resolved once: whichever of the answer, the decision or the deadline lands first wins"

// CanAnswer says whether principal may answer the item now (a question,
// open, before its deadline, not the asker's own).
func (it Item) CanAnswer(principalID string, now time.Time) error {
	if it.Kind != KindQuestion {
		return errs.Invalid("%s is an approval: an admin decides it over HTTP (POST /v1/inbox/{id}/decide); answer_post answers questions", it.ID)
	}
	if it.AskerPrincipalID == principalID {
		return errs.New(errs.Denied, "a question is for someone other than its asker", "you asked question %s; another identity answers it", it.ID)
	}
	return it.openAt(now)
}

// CanDecide says whether the item takes a human decision now.
func (it Item) CanDecide(now time.Time) error {
	if it.Kind != KindApproval && it.Kind != KindEnrolRequest {
		return errs.Invalid("%s is a question: answer it (POST /v1/inbox/{id}/answer)", it.ID)
	}
	return it.openAt(now)
}

// CanDecideOrAnswerOpen says whether the item is still open now.
func (it Item) CanDecideOrAnswerOpen(now time.Time) error { return it.openAt(now) }

func (it Item) openAt(now time.Time) error {
	if it.Status != Open {
		return errs.New(errs.InboxConflict, RuleResolved, "%s %s is already %s", it.Kind, it.ID, it.Status)
	}
	if it.Due(now) {
		return errs.New(errs.InboxConflict, RuleResolved, "%s %s passed its deadline at %s", it.Kind, it.ID, it.ExpiresAt.Format(time.RFC3339))
	}
	return nil
}

// Due reports whether the item is open past its deadline.
func (it Item) Due(now time.Time) bool {
	return it.Status == Open && it.ExpiresAt != nil && !now.Before(*it.ExpiresAt)
}

// ExpiryOutcome is the status the deadline resolves the item to.
func (it Item) ExpiryOutcome() Status {
	switch {
	case it.Kind == KindQuestion:
		return Expired
	case it.OnExpiry == "approve":
		return Approved
	default:
		return Declined
	}
}

// Decision parses a human decision (approved | declined).
func Decision(s string) (Status, error) {
	switch s {
	case "approved", "approve":
		return Approved, nil
	case "declined", "decline":
		return Declined, nil
	}
	return "", errs.Invalid("decision %q: want approved or declined", s)
}
