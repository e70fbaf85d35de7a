package wire

import (
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/domain"
)

// Notice is one pending notification: a nudge, not the record (read it
// with inbox_read or feed_read).
type Notice struct {
	Source   string    `json:"source" jsonschema:"attention (a resolution of your own question or approval) or subscription"`
	Kind     string    `json:"kind" jsonschema:"the event's kind family"`
	ID       string    `json:"id" jsonschema:"the event id"`
	Workarea string    `json:"workarea" jsonschema:"the workarea id"`
	Title    string    `json:"title"`
	At       time.Time `json:"at"`
}

// Notifications is the trailer a successful tool result carries when
// something is pending, and notify_wait's answer.
type Notifications struct {
	Pending []Notice `json:"pending"`
}

// ToNotifications converts drained notices.
func ToNotifications(ps []domain.Pending) Notifications {
	out := Notifications{Pending: make([]Notice, len(ps))}
	for i, p := range ps {
		out.Pending[i] = Notice{Source: p.Source, Kind: p.Kind, ID: p.ID, Workarea: p.Workarea, Title: p.Title, At: p.At}
	}
	return out
}

// SubscribeIn is the input of notify_subscribe.
type SubscribeIn struct {
	Kinds    []string `json:"kinds" jsonschema:"kind families: signal, finished, question, answer, approval, artifact, session, idea, system"`
	Workarea string   `json:"workarea,omitempty" jsonschema:"a workarea (id or path): events of its subtree; omit for every workarea you read"`
	Actor    string   `json:"actor,omitempty" jsonschema:"only events by this actor: a principal name or a key id"`
	DropOwn  bool     `json:"drop_own,omitempty" jsonschema:"leave out your own events"`
}

// Cmd converts the input.
func (in SubscribeIn) Cmd() app.SubscribeCmd {
	return app.SubscribeCmd{Kinds: in.Kinds, Workarea: in.Workarea, Actor: in.Actor, DropOwn: in.DropOwn}
}

// Subscription is one subscription as notify_subscribe and notify_list
// show it.
type Subscription struct {
	SubscriptionID string    `json:"subscription_id"`
	Kinds          []string  `json:"kinds"`
	Workarea       string    `json:"workarea,omitempty" jsonschema:"the workarea id of the scope (absent: every workarea you read)"`
	Actor          string    `json:"actor,omitempty"`
	DropOwn        bool      `json:"drop_own"`
	Cursor         int64     `json:"cursor" jsonschema:"the journal seq delivered up to"`
	CreatedAt      time.Time `json:"created_at"`
}

// ToSubscription converts a subscription.
func ToSubscription(s domain.Subscription) Subscription {
	return Subscription{SubscriptionID: s.ID, Kinds: s.Kinds, Workarea: s.WorkareaID, Actor: s.Actor,
		DropOwn: s.DropOwn, Cursor: s.Seq, CreatedAt: s.CreatedAt}
}

// UnsubscribeIn is the input of notify_unsubscribe.
type UnsubscribeIn struct {
	SubscriptionID string `json:"subscription_id"`
}

// UnsubscribeOut is the output of notify_unsubscribe.
type UnsubscribeOut struct {
	SubscriptionID string `json:"subscription_id"`
	Removed        bool   `json:"removed"`
}

// SubscriptionsOut is the output of notify_list.
type SubscriptionsOut struct {
	Subscriptions []Subscription `json:"subscriptions"`
}

// NotifyWaitIn is the input of notify_wait.
type NotifyWaitIn struct {
	WaitSeconds *int `json:"wait_seconds,omitempty" jsonschema:"how long to wait for something to be pending, 0–60 s (default 30; 0 polls once)"`
}

// Wait is the wait the input asks for.
func (in NotifyWaitIn) Wait() time.Duration {
	if in.WaitSeconds == nil {
		return app.DefaultWait
	}
	return waitOf(*in.WaitSeconds)
}
