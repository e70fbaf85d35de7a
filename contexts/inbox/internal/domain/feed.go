package domain

import (
	"strings"

	"github.com/omlhub/oml/platform/errs"
)

// Families are seed 002's closed set of feed event kinds (its "Kind
// families"). Sub-actions ride in the payload.
var Families = []string{"signal", "finished", "question", "answer", "approval", "artifact", "session", "idea", "system"}

// appendable are the kinds signal_append writes; the others have their
// own tool (question_post, answer_post) or are written by the hub.
var appendable = map[string]bool{"signal": true, "finished": true, "idea": true, "approval": true}

// FeedPrefix starts the journal type of every event the inbox writes:
// feed.<kind>.
const FeedPrefix = "feed."

// CheckSignalKind refuses a kind signal_append does not write.
func CheckSignalKind(kind string) error {
	switch {
	case appendable[kind]:
		return nil
	case kind == "question":
		return errs.Invalid("kind question: use question_post")
	case kind == "answer":
		return errs.Invalid("kind answer: use answer_post")
	case kind == "artifact" || kind == "session" || kind == "system":
		return errs.Invalid("kind %s is written by the hub, not appended", kind)
	}
	return errs.Invalid("kind %q: want signal, finished, idea or approval (the closed families: %s)", kind, strings.Join(Families, ", "))
}

// KindOf names the feed family of a journal event type: the inbox's own
// events carry theirs (feed.<kind>), session events are "session", and
// everything else in the journal is "system".
func KindOf(eventType string) string {
	if k, ok := strings.CutPrefix(eventType, FeedPrefix); ok {
		return k
	}
	if strings.HasPrefix(eventType, "session.") {
		return "session"
	}
	return "system"
}

// WorkingState reports an event about its actor's own working state (a
// session brain's writes): in the actor's events tail, never in a feed, a
// brief or a notification, which carry coordination.
func WorkingState(eventType string) bool { return strings.HasPrefix(eventType, "brain.") }

// CheckKindFilter refuses a feed_read kind outside the families.
func CheckKindFilter(kind string) error {
	if kind == "" {
		return nil
	}
	for _, f := range Families {
		if f == kind {
			return nil
		}
	}
	return errs.Invalid("kind %q: want one of %s", kind, strings.Join(Families, ", "))
}

// FeedQuery is one feed_read.
type FeedQuery struct {
	Workarea string
	Since    *int64
	Before   *int64
	Kind     string
	Session  string
	Limit    int
}

// Validate applies the default page and refuses what no feed serves.
func (q *FeedQuery) Validate() error {
	if q.Workarea == "" {
		return errs.Invalid("workarea is required: an id or a path")
	}
	if q.Since != nil && *q.Since < 0 {
		return errs.Invalid("since must be a journal seq (0 or more), got %d", *q.Since)
	}
	if q.Before != nil && *q.Before < 1 {
		return errs.Invalid("before must be a journal seq (1 or more), got %d", *q.Before)
	}
	if q.Since != nil && q.Before != nil && *q.Before <= *q.Since {
		return errs.Invalid("before (%d) must be above since (%d)", *q.Before, *q.Since)
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 0 || q.Limit > MaxLimit:
		return errs.New(errs.LimitCeiling, "a feed page is bounded: limit 1–500", "limit %d is outside 1–%d", q.Limit, MaxLimit)
	}
	return CheckKindFilter(q.Kind)
}
