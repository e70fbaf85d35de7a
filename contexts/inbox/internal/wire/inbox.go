package wire

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/journal"
)

// Once runs write under the caller's idempotency key (if any), scoped to
// (key, workarea, op): op names the operation and its target, as seed 002
// scopes keys. The stored response is decoded into out.
func Once[T any](ctx context.Context, idem idempotency.Doer, workarea, op, key string, req any, write func(ctx context.Context) (T, error)) (T, error) {
	var out T
	c, _ := auth.From(ctx)
	scope := idempotency.Scope{TenantID: c.TenantID, KeyID: c.KeyID, Workarea: workarea, Operation: op, Key: key}
	res, err := idem.Do(ctx, scope, req, func(ctx context.Context) (any, error) { return write(ctx) })
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(res.Response(), &out)
	return out, err
}

// QuestionIn is the input of question_post.
type QuestionIn struct {
	Workarea         string   `json:"workarea" jsonschema:"the workarea (id or path) the question is about"`
	Body             string   `json:"body" jsonschema:"the question"`
	Options          []string `json:"options,omitempty" jsonschema:"2–6 suggested answers, each one line of at most 80 characters, none blank, no duplicates"`
	ExpiresInSeconds *int64   `json:"expires_in_seconds,omitempty" jsonschema:"a deadline, 60–2592000 s; at it the question closes unanswered"`
	OnExpiry         string   `json:"on_expiry,omitempty" jsonschema:"refused on a question (approvals only)"`
	Session          string   `json:"session,omitempty" jsonschema:"the session this belongs to (recorded in the feed)"`
	IdempotencyKey   string   `json:"idempotency_key,omitempty" jsonschema:"a retry with the same key returns the first result"`
}

// Ask converts the input.
func (in QuestionIn) Ask() app.Ask {
	return app.Ask{Workarea: in.Workarea, Kind: domain.KindQuestion, Body: in.Body, Options: in.Options,
		ExpiresIn: in.ExpiresInSeconds, OnExpiry: in.OnExpiry, Session: in.Session}
}

// QuestionOut is the output of question_post: the three ids are one.
type QuestionOut struct {
	EventID          string     `json:"event_id"`
	QuestionID       string     `json:"question_id"`
	ThreadID         string     `json:"thread_id"`
	Workarea         string     `json:"workarea"`
	Seq              int64      `json:"seq"`
	ExpiresAt        *time.Time `json:"expires_at,omitempty"`
	IdempotentReplay bool       `json:"idempotent_replay"`
}

// ToQuestionOut converts a posted question.
func ToQuestionOut(it domain.Item) QuestionOut {
	return QuestionOut{EventID: it.ID, QuestionID: it.ID, ThreadID: it.ID, Workarea: it.WorkareaID, Seq: it.Seq, ExpiresAt: it.ExpiresAt}
}

// SignalIn is the input of signal_append.
type SignalIn struct {
	Workarea         string `json:"workarea" jsonschema:"the workarea (id or path) whose feed the event joins"`
	Kind             string `json:"kind" jsonschema:"signal, finished, idea or approval"`
	Body             string `json:"body" jsonschema:"the event's text"`
	Session          string `json:"session,omitempty" jsonschema:"the session this belongs to"`
	ExpiresInSeconds *int64 `json:"expires_in_seconds,omitempty" jsonschema:"approvals only: a deadline, 60–2592000 s"`
	OnExpiry         string `json:"on_expiry,omitempty" jsonschema:"approvals only: approve or decline at the deadline (decline when absent)"`
	IdempotencyKey   string `json:"idempotency_key,omitempty" jsonschema:"a retry with the same key returns the first result"`
}

// SignalOut is the output of signal_append.
type SignalOut struct {
	EventID          string     `json:"event_id"`
	Seq              int64      `json:"seq"`
	Kind             string     `json:"kind"`
	Workarea         string     `json:"workarea"`
	At               time.Time  `json:"at"`
	ApprovalID       string     `json:"approval_id,omitempty"`
	ExpiresAt        *time.Time `json:"expires_at,omitempty"`
	OnExpiry         string     `json:"on_expiry,omitempty"`
	IdempotentReplay bool       `json:"idempotent_replay"`
}

// AnswerIn is the input of answer_post.
type AnswerIn struct {
	QuestionID     string `json:"question_id" jsonschema:"the question's id (question_post's question_id, an inbox item's event_id)"`
	Body           string `json:"body" jsonschema:"the answer"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"a retry with the same key returns the first result"`
}

// Answer is a resolution as an item carries it.
type Answer struct {
	AnswerID string    `json:"answer_id"`
	Body     string    `json:"body,omitempty"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	Expired  bool      `json:"expired"`
}

// Decision is an approval's resolution.
type Decision struct {
	AnswerID string    `json:"answer_id"`
	Decision string    `json:"decision"`
	Note     string    `json:"note,omitempty"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	Expired  bool      `json:"expired"`
}

// Item is an inbox item.
type Item struct {
	ID               string     `json:"id"`
	EventID          string     `json:"event_id"`
	Kind             string     `json:"kind"`
	Workarea         string     `json:"workarea"`
	Status           string     `json:"status"`
	Body             string     `json:"body"`
	Options          []string   `json:"options,omitempty"`
	Asker            string     `json:"asker"`
	AskerKey         string     `json:"asker_key"`
	CreatedAt        time.Time  `json:"created_at"`
	ExpiresAt        *time.Time `json:"expires_at,omitempty"`
	OnExpiry         string     `json:"on_expiry,omitempty"`
	Expired          bool       `json:"expired"`
	Answer           *Answer    `json:"answer,omitempty"`
	Decision         *Decision  `json:"decision,omitempty"`
	Seq              int64      `json:"seq"`
	IdempotentReplay bool       `json:"idempotent_replay"`
}

// ToItem converts an item.
func ToItem(it domain.Item) Item {
	out := Item{
		ID: it.ID, EventID: it.ID, Kind: string(it.Kind), Workarea: it.WorkareaID, Status: string(it.Status), Body: it.Body,
		Options: it.Options, Asker: it.AskerPrincipal, AskerKey: it.AskerKeyID, CreatedAt: it.CreatedAt, ExpiresAt: it.ExpiresAt,
		OnExpiry: it.OnExpiry, Expired: it.Expired, Seq: it.Seq,
	}
	if it.Status == domain.Open || it.ResolvedAt == nil {
		return out
	}
	if it.Kind == domain.KindApproval {
		out.Decision = &Decision{AnswerID: it.AnswerEventID, Decision: string(it.Status), Note: it.ResolutionBody, By: it.ResolvedBy, At: *it.ResolvedAt, Expired: it.Expired}
	} else {
		out.Answer = &Answer{AnswerID: it.AnswerEventID, Body: it.ResolutionBody, By: it.ResolvedBy, At: *it.ResolvedAt, Expired: it.Expired}
	}
	return out
}

// InboxWaitIn is the input of inbox_wait: inbox_read's filters and a wait.
type InboxWaitIn struct {
	InboxIn
	WaitSeconds *int `json:"wait_seconds,omitempty" jsonschema:"how long to wait for something to land, 0–60 s (default 30; 0 reads once)"`
}

// Wait is the wait the input asks for.
func (in InboxWaitIn) Wait() time.Duration {
	if in.WaitSeconds == nil {
		return 30 * time.Second
	}
	return waitOf(*in.WaitSeconds)
}

// InboxIn is the input of inbox_read (and the filters of inbox_wait).
type InboxIn struct {
	Workarea string `json:"workarea,omitempty" jsonschema:"a workarea (id or path): items in its subtree; omit for every workarea you read"`
	Status   string `json:"status,omitempty" jsonschema:"open, resolved, answered, approved, declined or expired"`
	Actor    string `json:"actor,omitempty" jsonschema:"the asker: a principal name or a key id"`
	Since    int64  `json:"since,omitempty" jsonschema:"the next_since of your last read (0: from the start)"`
	Limit    int    `json:"limit,omitempty" jsonschema:"items at most, 1–500 (default 50)"`
}

// Query converts the input.
func (in InboxIn) Query() app.InboxQuery {
	return app.InboxQuery{Workarea: in.Workarea, Status: in.Status, Actor: in.Actor, Since: in.Since, Limit: in.Limit}
}

// InboxOut is the output of inbox_read and GET /v1/inbox.
type InboxOut struct {
	Items     []Item `json:"items"`
	NextSince int64  `json:"next_since" jsonschema:"pass as since to read on; a resolved item comes back after the cursor it was read at"`
}

// ToInboxOut converts a page.
func ToInboxOut(p app.InboxPage) InboxOut {
	out := InboxOut{Items: make([]Item, len(p.Items)), NextSince: p.NextSince}
	for i, it := range p.Items {
		out.Items[i] = ToItem(it)
	}
	return out
}

// FeedIn is the input of feed_read.
type FeedIn struct {
	Workarea string `json:"workarea" jsonschema:"the workarea (id or path) whose feed to read"`
	Since    *int64 `json:"since,omitempty" jsonschema:"read forward after this seq (omit: from your stored cursor); advances the stored cursor"`
	Before   *int64 `json:"before,omitempty" jsonschema:"read back before this seq, newest first; moves no cursor"`
	Kind     string `json:"kind,omitempty" jsonschema:"one family: signal, finished, question, answer, approval, artifact, session, idea, system"`
	Session  string `json:"session,omitempty" jsonschema:"only events recorded for this session"`
	Limit    int    `json:"limit,omitempty" jsonschema:"events at most, 1–500 (default 50)"`
}

// Query converts the input.
func (in FeedIn) Query() domain.FeedQuery {
	return domain.FeedQuery{Workarea: in.Workarea, Since: in.Since, Before: in.Before, Kind: in.Kind, Session: in.Session, Limit: in.Limit}
}

// FeedEvent is one feed event.
type FeedEvent struct {
	Seq       int64          `json:"seq"`
	EventID   string         `json:"event_id"`
	Kind      string         `json:"kind"`
	EventType string         `json:"event_type"`
	Actor     string         `json:"actor"`
	At        time.Time      `json:"at"`
	Subject   map[string]any `json:"subject"`
	Payload   map[string]any `json:"payload"`
}

// FeedOut is the output of feed_read.
type FeedOut struct {
	Workarea   string      `json:"workarea"`
	Events     []FeedEvent `json:"events"`
	NextSince  *int64      `json:"next_since,omitempty" jsonschema:"the newest seq read (forward reads): poll on from it"`
	NextBefore *int64      `json:"next_before,omitempty" jsonschema:"the oldest seq returned: page back from it"`
}

// ToFeedOut converts a page.
func ToFeedOut(p app.FeedPage) FeedOut {
	out := FeedOut{Workarea: p.Workarea, Events: make([]FeedEvent, len(p.Events)), NextSince: p.NextSince, NextBefore: p.NextBefore}
	for i, e := range p.Events {
		out.Events[i] = toFeedEvent(e)
	}
	return out
}

func toFeedEvent(e journal.Stored) FeedEvent {
	obj := func(b json.RawMessage) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(b, &m) // the journal stores objects
		if m == nil {
			m = map[string]any{}
		}
		return m
	}
	// Only coordination records show their payload: other contexts'
	// events carry what readers may not see (a promotion's closure, an
	// edge's far endpoint), so they show their subject alone, as the
	// events tail does.
	payload := map[string]any{}
	if strings.HasPrefix(e.Type, domain.FeedPrefix) {
		payload = obj(e.Payload)
	}
	return FeedEvent{Seq: e.Seq, EventID: e.ID, Kind: domain.KindOf(e.Type), EventType: e.Type, Actor: e.Actor, At: e.At,
		Subject: obj(e.Subject), Payload: payload}
}

// waitOf converts wait_seconds without overflow: a value outside 0–60
// becomes an out-of-range wait the service refuses (never a wrapped one).
func waitOf(seconds int) time.Duration {
	if seconds < 0 || seconds > 60 {
		return -time.Second
	}
	return time.Duration(seconds) * time.Second
}
