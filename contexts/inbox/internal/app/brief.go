package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/journal"
)

// PreviousSession is the caller's previous session in a workarea (from
// the sessions context).
type PreviousSession struct {
	ID, Name, Status string
	LastActivity     time.Time
	HandoffNote      string
	RecoveryPath     string
}

// Sessions is the sessions context as the brief needs it.
type Sessions interface {
	// Previous returns the caller's most recently active session in the
	// workarea other than the one its key works now.
	Previous(ctx context.Context, workareaID string) (PreviousSession, bool, error)
}

// BriefEntry is one pointer in a brief: an event of the window, or an
// item still waiting on someone (Open).
type BriefEntry struct {
	ID        string
	Seq       int64
	Type      string
	Actor     string
	At        time.Time
	Text      string
	Truncated bool
	Open      bool
}

// BriefAnswer is an answer or decision on one of the caller's own items.
type BriefAnswer struct {
	ItemID, AnswerID string
	Outcome          string // answered | expired | approved | declined
	Text             string
	Truncated        bool
	Expired          bool
	By               string
	At               time.Time
}

// Brief is session_brief's answer: the window it read and its sections.
type Brief struct {
	Workarea      Workarea
	SinceSeq      int64
	Basis         string
	Answers       []BriefAnswer
	AnswersMore   int
	AnswersCapped bool
	Previous      *PreviousSession
	Events        []BriefEntry
	EventsMore    int
	EventsCapped  bool
	// Stale are the workarea's knowledge-base pages past stale_after.
	Stale StalePages
}

// Pages is the knowledge context as the brief needs it.
type Pages interface {
	// Stale lists the workarea's live pages whose promoted head is past
	// its stale_after, the longest overdue first (at most 10).
	Stale(ctx context.Context, workareaID string) (StalePages, error)
}

// StalePages is the brief's stale pages section.
type StalePages struct {
	Items  []StalePage
	More   int
	Capped bool
}

// StalePage is one page past its stale_after.
type StalePage struct {
	Path       string
	Version    string
	StaleAfter time.Time
	PromotedAt *time.Time
}

// audit are the event families the brief leaves out: administration and
// the review trail, not work.
var audit = []string{"grant.", "key.", "ban.", "tenant.", "attachment.", "review.", "policy."}

// SessionBrief briefs the caller on a workarea in one read that makes no
// record and moves no feed cursor (seed 002, "The session brief"): the
// window is the events above its feed cursor, or, when it never read the
// feed, those after its previous session's last activity, or else the
// newest; answers on its own items in the window, its previous session's
// handoff in full, the rest of the window ranked (domain.RankEvents).
func (s *Service) SessionBrief(ctx context.Context, ref string) (Brief, error) {
	c, err := auth.ContentCaller(ctx, "session brief")
	if err != nil {
		return Brief{}, err
	}
	w, err := s.readable(ctx, ref)
	if err != nil {
		return Brief{}, err
	}
	if err := s.settle(ctx, c.TenantID); err != nil {
		return Brief{}, err
	}
	b := Brief{Workarea: w, Basis: domain.BasisNone, Answers: []BriefAnswer{}, Events: []BriefEntry{}}
	cursor, err := s.Repo.CursorGet(ctx, c.TenantID, c.PrincipalID, w.ID)
	if err != nil {
		return Brief{}, fmt.Errorf("feed cursor: %w", err)
	}
	var prevAt time.Time
	if s.Sessions != nil {
		prev, ok, err := s.Sessions.Previous(ctx, w.ID)
		if err != nil {
			return Brief{}, err
		}
		if ok {
			b.Previous, prevAt = &prev, prev.LastActivity
		}
	}
	switch {
	case cursor > 0:
		b.Basis, b.SinceSeq = domain.BasisFeedCursor, cursor
	case b.Previous != nil:
		b.Basis = domain.BasisPreviousSession
	}
	window, err := s.window(ctx, c, w, b.SinceSeq, b.Basis, prevAt)
	if err != nil {
		return Brief{}, err
	}
	if b.Basis == domain.BasisPreviousSession && len(window) > 0 {
		b.SinceSeq = window[len(window)-1].Seq - 1 // window is newest first
	}

	answered, err := s.answersIn(ctx, c, w, b)
	if err != nil {
		return Brief{}, err
	}
	skip := map[string]bool{}
	for i, it := range answered {
		skip[it.AnswerEventID] = true
		if i < domain.BriefAnswers {
			b.Answers = append(b.Answers, toBriefAnswer(it))
		}
	}
	b.AnswersMore = max(0, len(answered)-domain.BriefAnswers)
	b.AnswersCapped = len(answered) >= domain.BriefCountCap

	open, err := s.Repo.ItemsAfter(ctx, ItemFilter{TenantID: c.TenantID, Status: string(domain.Open), IDPath: w.IDPath, Limit: domain.ScanPage})
	if err != nil {
		return Brief{}, fmt.Errorf("open items: %w", err)
	}
	entries := map[int64]BriefEntry{}
	var ranked []domain.BriefEvent
	for _, it := range open {
		// An enrolment request is the tenant's admins' alone.
		if it.WorkareaID != w.ID || !it.ShownTo(w.Reader, w.Admin) {
			continue
		}
		skip[it.ID] = true
		text, cut := domain.Cut(it.Body)
		entries[it.Seq] = BriefEntry{ID: it.ID, Seq: it.Seq, Type: domain.FeedPrefix + string(it.Kind), Actor: it.AskerPrincipal,
			At: it.CreatedAt, Text: text, Truncated: cut, Open: true}
		ranked = append(ranked, domain.BriefEvent{Seq: it.Seq, At: it.CreatedAt, Open: true, Own: it.AskerPrincipalID == c.PrincipalID})
	}
	for _, e := range window {
		if skip[e.ID] || domain.WorkingState(e.Type) || slices.ContainsFunc(audit, func(p string) bool { return strings.HasPrefix(e.Type, p) }) {
			continue
		}
		if _, dup := entries[e.Seq]; dup {
			continue
		}
		text, cut := domain.Cut(eventText(e))
		entries[e.Seq] = BriefEntry{ID: e.ID, Seq: e.Seq, Type: e.Type, Actor: e.Actor, At: e.At, Text: text, Truncated: cut}
		own := e.Actor == c.KeyID || strings.HasPrefix(e.Type, "session.")
		ranked = append(ranked, domain.BriefEvent{Seq: e.Seq, At: e.At, Own: own})
	}
	shown, more := domain.RankEvents(ranked)
	for _, r := range shown {
		b.Events = append(b.Events, entries[r.Seq])
	}
	b.EventsMore, b.EventsCapped = more, len(ranked) >= domain.BriefCountCap
	if s.Pages != nil {
		st, err := s.Pages.Stale(ctx, w.ID)
		if err != nil {
			return Brief{}, fmt.Errorf("stale pages: %w", err)
		}
		b.Stale = st
	}
	return b, nil
}

// window reads the brief's window, newest first: the events after
// sinceSeq the caller may see, or those after its previous session's last
// activity, or the newest BriefRankPool; at most BriefCountCap.
func (s *Service) window(ctx context.Context, c auth.Caller, w Workarea, sinceSeq int64, basis string, prevAt time.Time) ([]journal.Stored, error) {
	limit := domain.BriefCountCap
	if basis == domain.BasisNone {
		limit = domain.BriefRankPool
	}
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return nil, err
	}
	var out []journal.Stored
	before := int64(0)
	// Like the tail, one brief scans a bounded part of the journal, however
	// much of it the caller may not see.
	for scanned := 0; len(out) < limit && scanned < domain.MaxScan; {
		page, err := s.Journal.InWorkarea(ctx, c.TenantID, w.ID, sinceSeq, before, domain.ScanPage, true)
		if err != nil {
			return nil, fmt.Errorf("read the window: %w", err)
		}
		for _, e := range page {
			before, scanned = e.Seq, scanned+1
			if basis == domain.BasisPreviousSession && !e.At.After(prevAt) {
				return out, nil
			}
			d := eventOf(e)
			if domain.Visible(d, c.KeyID, true, fence) && len(out) < limit {
				out = append(out, e)
			}
		}
		if len(page) < domain.ScanPage {
			break
		}
	}
	return out, nil
}

// answersIn lists the caller's own items resolved in the brief's window,
// newest first (at most BriefCountCap).
func (s *Service) answersIn(ctx context.Context, c auth.Caller, w Workarea, b Brief) ([]domain.Item, error) {
	f := ItemFilter{TenantID: c.TenantID, After: b.SinceSeq, Status: "resolved", Asker: c.Principal, IDPath: w.IDPath, Limit: domain.ScanPage}
	var out []domain.Item
	for scanned := 0; len(out) < domain.BriefCountCap && scanned < domain.MaxScan; scanned += f.Limit {
		batch, err := s.Repo.ItemsAfter(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("answers: %w", err)
		}
		for _, it := range batch {
			f.After = it.Seq
			if it.WorkareaID == w.ID && it.AskerPrincipalID == c.PrincipalID {
				out = append(out, it)
			}
		}
		if len(batch) < f.Limit {
			break
		}
	}
	slices.Reverse(out) // ItemsAfter reads oldest first
	return out, nil
}

func toBriefAnswer(it domain.Item) BriefAnswer {
	text, cut := domain.Cut(it.ResolutionBody)
	a := BriefAnswer{ItemID: it.ID, AnswerID: it.AnswerEventID, Outcome: string(it.Status), Text: text, Truncated: cut,
		Expired: it.Expired, By: it.ResolvedBy}
	if it.ResolvedAt != nil {
		a.At = *it.ResolvedAt
	}
	if it.Kind == domain.KindQuestion && it.Expired {
		a.Outcome = "expired"
	}
	return a
}

// eventText is what a brief shows of an event: its body when it has one,
// else its type and subject.
func eventText(e journal.Stored) string {
	var p struct {
		Body string `json:"body"`
	}
	if json.Unmarshal(e.Payload, &p) == nil && p.Body != "" {
		return p.Body
	}
	return e.Type + " " + string(e.Subject)
}
