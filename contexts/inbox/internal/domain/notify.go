package domain

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

// MaxPending bounds one notification trailer: what is left stays above the
// cursors and rides on the next call.
const MaxPending = 50

// MaxSubscriptions bounds the subscriptions one principal holds: every
// drain walks each of them.
const MaxSubscriptions = 32

// maxTitle bounds a notification's title (runes): a nudge, not the record.
const maxTitle = 120

// The sources of a pending notification.
const (
	SourceAttention    = "attention"
	SourceSubscription = "subscription"
)

// Pending is one notification: a nudge towards a record the caller reads
// with inbox_read or feed_read, never the record itself.
type Pending struct {
	Source   string
	Kind     string
	ID       string
	Workarea string
	Title    string
	At       time.Time
}

// CheckKinds validates a subscription's kinds: at least one, each a kind
// family, returned without duplicates.
func CheckKinds(kinds []string) ([]string, error) {
	if len(kinds) == 0 {
		return nil, errs.Invalid("kinds: at least one of %s", strings.Join(Families, ", "))
	}
	out := make([]string, 0, len(kinds))
	for i, k := range kinds {
		if !slices.Contains(Families, k) {
			return nil, errs.Invalid("kinds[%d] %q: want one of %s", i, k, strings.Join(Families, ", "))
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// Subscription is a principal's standing interest in feed events, with
// the journal seq it has delivered up to.
type Subscription struct {
	TenantID, ID, PrincipalID string
	Kinds                     []string
	WorkareaID, IDPath        string // "" every workarea the owner reads
	Actor                     string // "" any; a principal name or a key id
	DropOwn                   bool
	Seq                       int64
	CreatedAt                 time.Time
}

// Me is the caller a drain runs for.
type Me struct {
	KeyID, Principal string
}

// Matches reports whether e is one the subscription asks for, before any
// read check: its kind, its scope (idPath is e's workarea's id path, ""
// when unknown) and its actor.
func (s Subscription) Matches(e Event, idPath string, me Me) bool {
	if !slices.Contains(s.Kinds, KindOf(e.Type)) {
		return false
	}
	if s.IDPath != "" && idPath != s.IDPath && !strings.HasPrefix(idPath, s.IDPath+".") {
		return false
	}
	principal := eventPrincipal(e)
	if s.Actor != "" && s.Actor != e.Actor && s.Actor != principal {
		return false
	}
	own := e.Actor == me.KeyID || (principal != "" && principal == me.Principal)
	return !(s.DropOwn && own)
}

func eventPrincipal(e Event) string {
	var p struct {
		Principal string `json:"principal"`
	}
	_ = json.Unmarshal(e.Payload, &p)
	return p.Principal
}

// EventNotice is the nudge for a feed event a subscription delivers.
func EventNotice(e Event, id string, at time.Time) Pending {
	kind := KindOf(e.Type)
	var p struct {
		Body      string `json:"body"`
		Principal string `json:"principal"`
	}
	_ = json.Unmarshal(e.Payload, &p)
	title := e.Type
	if p.Body != "" {
		title = kind + ": " + p.Body
	}
	if p.Principal != "" {
		title = p.Principal + " · " + title
	}
	return Pending{Source: SourceSubscription, Kind: kind, ID: id, Workarea: e.Workarea, Title: clip(title), At: at}
}

// AttentionNotice is the nudge for a resolution of the caller's own item:
// an answer (or the hub's expiry) to a question, a decision on an
// approval; all arrive as kind answer, the record the feed holds.
func AttentionNotice(it Item) Pending {
	var title string
	switch {
	case it.Kind == KindApproval && it.Expired:
		title = "approval " + string(it.Status) + " at its deadline: " + it.Body
	case it.Kind == KindApproval:
		title = "approval " + string(it.Status) + " by " + it.ResolvedBy + ": " + it.Body
	case it.Expired:
		title = "question expired unanswered: " + it.Body
	default:
		title = "answer from " + it.ResolvedBy + ": " + it.ResolutionBody
	}
	p := Pending{Source: SourceAttention, Kind: "answer", ID: it.AnswerEventID, Workarea: it.WorkareaID, Title: clip(title)}
	if p.ID == "" {
		p.ID = it.ID
	}
	if it.ResolvedAt != nil {
		p.At = *it.ResolvedAt
	}
	return p
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxTitle {
		return string(r[:maxTitle-1]) + "…"
	}
	return s
}
