package wire

import (
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
)

// BriefIn is the input of session_brief.
type BriefIn struct {
	Workarea string `json:"workarea" jsonschema:"the workarea (id or path) to be briefed on"`
}

// BriefSince names the window's cursor and its basis.
type BriefSince struct {
	Cursor int64  `json:"cursor"`
	Basis  string `json:"basis" jsonschema:"feed_cursor, previous_session or none"`
}

// BriefAnswer is an answer or decision on one of the caller's items.
type BriefAnswer struct {
	ID        string    `json:"id"`
	AnswerID  string    `json:"answer_id"`
	Outcome   string    `json:"outcome" jsonschema:"answered or expired (a question), approved or declined (an approval)"`
	Text      string    `json:"text"`
	Truncated bool      `json:"truncated"`
	Expired   bool      `json:"expired"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
}

// BriefAnswers is the answers section.
type BriefAnswers struct {
	Items      []BriefAnswer `json:"items"`
	More       int           `json:"more"`
	MoreCapped bool          `json:"more_capped"`
}

// BriefEvent is one pointer of the events section.
type BriefEvent struct {
	ID        string    `json:"id"`
	Seq       int64     `json:"seq"`
	EventType string    `json:"event_type"`
	Actor     string    `json:"actor"`
	At        time.Time `json:"at"`
	Text      string    `json:"text"`
	Truncated bool      `json:"truncated"`
	Open      bool      `json:"open"`
}

// BriefEvents is the events section.
type BriefEvents struct {
	Items      []BriefEvent `json:"items"`
	More       int          `json:"more"`
	MoreCapped bool         `json:"more_capped"`
}

// BriefSession is the caller's previous session, its handoff note in full.
type BriefSession struct {
	SessionID    string    `json:"session_id"`
	Name         string    `json:"name"`
	Status       string    `json:"status"`
	LastActivity time.Time `json:"last_activity"`
	HandoffNote  string    `json:"handoff_note"`
	RecoveryPath string    `json:"recovery_path"`
}

// BriefPages is the stale knowledge-base pages section.
type BriefPages struct {
	Items      []BriefPage `json:"items"`
	More       int         `json:"more"`
	MoreCapped bool        `json:"more_capped"`
}

// BriefPage is a knowledge-base page past its stale_after.
type BriefPage struct {
	Path       string     `json:"path"`
	Version    string     `json:"version"`
	StaleAfter time.Time  `json:"stale_after"`
	PromotedAt *time.Time `json:"promoted_at,omitempty"`
}

// BriefOut is the output of session_brief.
type BriefOut struct {
	Workarea        string        `json:"workarea"`
	Since           BriefSince    `json:"since"`
	Answers         BriefAnswers  `json:"answers"`
	PreviousSession *BriefSession `json:"previous_session"`
	Events          BriefEvents   `json:"events"`
	StalePages      BriefPages    `json:"stale_pages"`
}

// ToBriefOut converts a brief.
func ToBriefOut(b app.Brief) BriefOut {
	out := BriefOut{
		Workarea: b.Workarea.ID, Since: BriefSince{Cursor: b.SinceSeq, Basis: b.Basis},
		Answers:    BriefAnswers{Items: []BriefAnswer{}, More: b.AnswersMore, MoreCapped: b.AnswersCapped},
		Events:     BriefEvents{Items: []BriefEvent{}, More: b.EventsMore, MoreCapped: b.EventsCapped},
		StalePages: BriefPages{Items: []BriefPage{}, More: b.Stale.More, MoreCapped: b.Stale.Capped},
	}
	for _, p := range b.Stale.Items {
		out.StalePages.Items = append(out.StalePages.Items, BriefPage{Path: p.Path, Version: p.Version, StaleAfter: p.StaleAfter.UTC(),
			PromotedAt: p.PromotedAt})
	}
	for _, a := range b.Answers {
		out.Answers.Items = append(out.Answers.Items, BriefAnswer{ID: a.ItemID, AnswerID: a.AnswerID, Outcome: a.Outcome,
			Text: a.Text, Truncated: a.Truncated, Expired: a.Expired, By: a.By, At: a.At})
	}
	for _, e := range b.Events {
		out.Events.Items = append(out.Events.Items, BriefEvent{ID: e.ID, Seq: e.Seq, EventType: e.Type, Actor: e.Actor,
			At: e.At, Text: e.Text, Truncated: e.Truncated, Open: e.Open})
	}
	if p := b.Previous; p != nil {
		out.PreviousSession = &BriefSession{SessionID: p.ID, Name: p.Name, Status: p.Status, LastActivity: p.LastActivity,
			HandoffNote: p.HandoffNote, RecoveryPath: p.RecoveryPath}
	}
	return out
}
