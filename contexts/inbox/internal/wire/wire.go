// Package wire holds the inbox context's JSON shapes (seed 000's
// oml_events_tail), shared by its HTTP route and MCP tool.
package wire

import (
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/domain"
)

// TailIn is the input of oml_events_tail.
type TailIn struct {
	Scope    string `json:"scope" jsonschema:"a workarea (id or path): events of its subtree that this key may read"`
	AfterSeq *int64 `json:"after_seq,omitempty" jsonschema:"the last journal seq you processed (omit to start at the newest)"`
	Limit    int    `json:"limit,omitempty" jsonschema:"events at most, 1–500 (default 50)"`
}

// Query converts the input.
func (in TailIn) Query() domain.TailQuery {
	return domain.TailQuery{Scope: in.Scope, AfterSeq: in.AfterSeq, Limit: in.Limit}
}

// Event is one event of a tail.
type Event struct {
	Seq       int64          `json:"seq"`
	EventType string         `json:"event_type"`
	At        time.Time      `json:"at"`
	Subject   map[string]any `json:"subject"`
	Workarea  string         `json:"workarea,omitempty"`
	Actor     string         `json:"actor" jsonschema:"the key (or hub, system) that caused the event; blank unless it is yours, the hub's or the system's, a coordination record's, or in a workarea you administer"`
	Hash      string         `json:"hash" jsonschema:"hex SHA-256 link of the event in the tenant's hash chain"`
}

// TailOut is the output of oml_events_tail and GET /v1/events.
type TailOut struct {
	Events       []Event `json:"events"`
	HeadSeq      int64   `json:"head_seq"`
	Idle         bool    `json:"idle"`
	NextAfterSeq int64   `json:"next_after_seq" jsonschema:"where the next call starts (after_seq); beyond the last event when a read scanned events this key may not see"`
}

// ToTailOut converts a tail page.
func ToTailOut(p app.TailPage) TailOut {
	out := TailOut{Events: make([]Event, len(p.Events)), HeadSeq: p.HeadSeq, Idle: p.Idle, NextAfterSeq: p.NextAfterSeq}
	for i, e := range p.Events {
		var subject map[string]any
		_ = json.Unmarshal(e.Subject, &subject) // the journal stores objects
		if subject == nil {
			subject = map[string]any{}
		}
		out.Events[i] = Event{Seq: e.Seq, EventType: e.Type, At: e.At, Subject: subject, Workarea: e.Workarea, Actor: e.Actor, Hash: hex.EncodeToString(e.Hash)}
	}
	return out
}
