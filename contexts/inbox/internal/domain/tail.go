// Package domain holds the inbox context's rules. Today: what an events
// tail shows a reader (R3: never another writer's held submission) and the
// bounds of one tail read. It imports the standard library and
// platform/errs only.
package domain

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/omlhub/oml/platform/errs"
)

// Tail read bounds: a page holds at most MaxLimit events; one read scans
// at most MaxScan journal events for them (the answer then says where to
// go on from).
const (
	DefaultLimit = 50
	MaxLimit     = 500
	ScanPage     = 500
	MaxScan      = 10_000
)

// TailQuery is one events-tail read: a scope, the client's cursor (nil:
// start at the newest event), a page size.
type TailQuery struct {
	Scope    string
	AfterSeq *int64
	Limit    int
}

// Validate applies the default page size and refuses what no tail serves.
func (q *TailQuery) Validate() error {
	if q.Scope == "" {
		return errs.Invalid("scope is required: a workarea id or path")
	}
	if q.AfterSeq != nil && *q.AfterSeq < 0 {
		return errs.Invalid("after_seq must be a journal sequence (0 or more), got %d", *q.AfterSeq)
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 0 || q.Limit > MaxLimit:
		return errs.New(errs.LimitCeiling, "the events tail is bounded: limit 1–500; an answer is never silently truncated",
			"limit %d is outside 1–%d", q.Limit, MaxLimit)
	}
	return nil
}

// Event is a journal event as the tail considers it.
type Event struct {
	Seq      int64
	Type     string
	Actor    string
	Workarea string
	Payload  json.RawMessage
	// Simulation is the simulation (D10) of the row the event is about,
	// from its subject; "" for none.
	Simulation string
}

// public are the event types every reader of the event's workarea sees,
// whoever caused them: what changed in what they may read, and the
// lifecycle of agents' work sessions there (seed 002's feed shows them;
// the handoff note itself is not in the event). Submissions,
// serves, approvals short of promotion, rejections, expiries and edge
// proposals concern held items and pending proposals (R3): only the key
// that made them sees them. Grants, keys and bans are administration, not
// content: they are in the evidence, not the tail.
var public = map[string]bool{
	"lifecycle.promote":        true,
	"lifecycle.demote":         true,
	"workarea.create":          true,
	"workarea.update":          true,
	"policy.review":            true,
	"workarea.relate_ratified": true,
	"claim.relate_ratified":    true,
	"session.start":            true,
	"session.end":              true,
	"session.adopt":            true,
	"session.fork":             true,
	"session.reassign":         true,
	"session.prune":            true,
}

// Visible reports whether the caller (its key, and its fence: the
// simulations whose audience holds it) sees e in a tail whose scope holds
// e's workarea readably (inScope). An event about a simulation's row is
// absent outside that simulation's audience (D10). An event without a workarea is in no
// scope. An erasure is public only for a claim that was promoted: erasing
// a held one must not reveal that it existed.
func Visible(e Event, callerKey string, inScope bool, fence []string) bool {
	if !inScope || e.Workarea == "" || (e.Simulation != "" && !slices.Contains(fence, e.Simulation)) {
		return false
	}
	// Coordination records (signals, questions, answers, approvals) are
	// visible at once to every reader of their workarea.
	if e.Actor == callerKey || public[e.Type] || strings.HasPrefix(e.Type, FeedPrefix) {
		return true
	}
	if e.Type == "lifecycle.erase" {
		var p struct {
			WasPromoted bool `json:"was_promoted"`
		}
		return json.Unmarshal(e.Payload, &p) == nil && p.WasPromoted
	}
	return false
}

// ActorShown says whether a tail names who caused a visible event: the
// caller's own events, the hub's and the system's, coordination records
// (feed.*, which name their author anyway), and anything in a workarea the
// caller administers. Otherwise the actor is left blank: a reader learns a
// claim was promoted, not which key approved it.
func ActorShown(e Event, caller string, admin bool) bool {
	return admin || e.Actor == caller || e.Actor == "hub" || e.Actor == "system" || strings.HasPrefix(e.Type, "feed.")
}
