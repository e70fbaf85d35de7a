package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
)

// Service is the inbox context's application service.
type Service struct {
	Access     Access
	Enrolments Enrolments
	Journal    Journal
	Repo       Repository
	Notices    Notices
	Tx         Transactor
	Limits     Limits
	Wakes      Wakes
	// Search, when set, indexes coordination records for search.
	Search Search
	// Pages, when set, gives the session brief its stale pages.
	Pages    Pages
	Sessions Sessions
	Now      func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC().Truncate(time.Microsecond)
	}
	return s.Now().UTC().Truncate(time.Microsecond)
}

// TailPage is one events-tail answer: the visible events after the
// client's cursor, the journal's head, where to go on from, and whether
// the read reached the head.
type TailPage struct {
	Events       []journal.Stored
	HeadSeq      int64
	NextAfterSeq int64
	Idle         bool
}

// Tail returns the journal events after q.AfterSeq that the caller may
// see in q.Scope's subtree (domain.Visible): public events in workareas it
// reads there, and its own. Without AfterSeq it starts at the head: no
// events, and the head to go on from. A cursor beyond the head is
// request.validation, never a silent restart. One read scans at most
// domain.MaxScan events; NextAfterSeq says where the next one starts.
func (s *Service) Tail(ctx context.Context, q domain.TailQuery) (TailPage, error) {
	c, err := auth.ContentCaller(ctx, "events tail")
	if err != nil {
		return TailPage{}, err
	}
	if err := q.Validate(); err != nil {
		return TailPage{}, err
	}
	scope, err := s.Access.Workarea(ctx, q.Scope)
	if err != nil {
		return TailPage{}, err
	}
	if !scope.Reader {
		return TailPage{}, errs.New(errs.NotFound, "effective access (D7); unknown and out-of-scope are indistinguishable",
			"no readable workarea with that reference for this key")
	}
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return TailPage{}, err
	}
	head, err := s.Journal.Head(ctx, c.TenantID)
	if err != nil {
		return TailPage{}, err
	}
	page := TailPage{Events: []journal.Stored{}, HeadSeq: head, NextAfterSeq: head, Idle: true}
	if q.AfterSeq == nil {
		return page, nil
	}
	after := *q.AfterSeq
	if after > head {
		return TailPage{}, errs.Invalid("after_seq %d is beyond the journal's head %d: keep the last seq a tail returned", after, head)
	}
	for scanned := 0; len(page.Events) < q.Limit && after < head && scanned < domain.MaxScan; {
		batch, err := s.Journal.After(ctx, c.TenantID, after, domain.ScanPage)
		if err != nil {
			return TailPage{}, err
		}
		if len(batch) == 0 {
			break
		}
		readable, admin, err := s.readableIn(ctx, scope, batch)
		if err != nil {
			return TailPage{}, err
		}
		for _, e := range batch {
			if e.Seq > head || len(page.Events) == q.Limit {
				break
			}
			after, scanned = e.Seq, scanned+1
			d := eventOf(e)
			if domain.Visible(d, c.KeyID, readable[e.Workarea], fence) {
				if !domain.ActorShown(d, c.KeyID, admin[e.Workarea]) {
					e.Actor = ""
				}
				page.Events = append(page.Events, e)
			}
		}
	}
	page.NextAfterSeq, page.Idle = after, after >= head
	return page, nil
}

// readableIn reports, for each workarea the batch's events name, whether
// the caller reads it inside scope's subtree.
func (s *Service) readableIn(ctx context.Context, scope Workarea, batch []journal.Stored) (readable, admin map[string]bool, err error) {
	var ids []string
	for _, e := range batch {
		if e.Workarea != "" && !slices.Contains(ids, e.Workarea) {
			ids = append(ids, e.Workarea)
		}
	}
	readable, admin = make(map[string]bool, len(ids)), make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return readable, admin, nil
	}
	ws, err := s.Access.WorkareasByIDs(ctx, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("event workareas: %w", err)
	}
	for id, w := range ws {
		readable[id] = w.Reader && (w.IDPath == scope.IDPath || strings.HasPrefix(w.IDPath, scope.IDPath+"."))
		admin[id] = readable[id] && w.Admin
	}
	return readable, admin, nil
}

// eventOf is a journal event as the inbox's rules read it.
func eventOf(e journal.Stored) domain.Event {
	return domain.Event{Seq: e.Seq, Type: e.Type, Actor: e.Actor, Workarea: e.Workarea, Payload: e.Payload, Simulation: e.Simulation()}
}
