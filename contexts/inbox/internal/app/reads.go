package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// InboxQuery is one inbox read.
type InboxQuery struct {
	Workarea string // "" every workarea the caller reads
	Status   string
	Actor    string // the asker's principal name or key id
	Since    int64
	Limit    int
	// Newest lists newest first (the page's resolved items); NextSince is
	// then the newest item's seq.
	Newest bool
}

// InboxPage is a page of items in cursor order and where to go on from.
type InboxPage struct {
	Items     []domain.Item
	NextSince int64
}

// Inbox lists the inbox items the caller may see (reader on their
// workarea), after q.Since in cursor order, due items settled first so
// none past its deadline reads as open.
func (s *Service) Inbox(ctx context.Context, q InboxQuery) (InboxPage, error) {
	c, err := auth.ContentCaller(ctx, "inbox reads")
	if err != nil {
		return InboxPage{}, err
	}
	if err := domain.ParseStatusFilter(q.Status); err != nil {
		return InboxPage{}, err
	}
	if q.Since < 0 {
		return InboxPage{}, errs.Invalid("since must be 0 or more, got %d", q.Since)
	}
	switch {
	case q.Limit == 0:
		q.Limit = domain.DefaultLimit
	case q.Limit < 0 || q.Limit > domain.MaxLimit:
		return InboxPage{}, errs.New(errs.LimitCeiling, "an inbox page is bounded: limit 1–500", "limit %d is outside 1–%d", q.Limit, domain.MaxLimit)
	}
	f := ItemFilter{TenantID: c.TenantID, After: q.Since, Status: q.Status, Asker: q.Actor, Limit: domain.ScanPage, Newest: q.Newest}
	if q.Workarea != "" {
		w, err := s.readable(ctx, q.Workarea)
		if err != nil {
			return InboxPage{}, err
		}
		f.IDPath = w.IDPath
	}
	if err := s.settle(ctx, c.TenantID); err != nil {
		return InboxPage{}, err
	}
	page := InboxPage{Items: []domain.Item{}, NextSince: q.Since}
	for scanned := 0; len(page.Items) < q.Limit && scanned < domain.MaxScan; {
		batch, err := s.Repo.ItemsAfter(ctx, f)
		if err != nil {
			return InboxPage{}, fmt.Errorf("read inbox: %w", err)
		}
		if len(batch) == 0 {
			break
		}
		var wids []string
		for _, it := range batch {
			wids = append(wids, it.WorkareaID)
		}
		ws, err := s.Access.WorkareasByIDs(ctx, wids)
		if err != nil {
			return InboxPage{}, err
		}
		for _, it := range batch {
			if len(page.Items) == q.Limit {
				break
			}
			if q.Newest {
				f.Before, scanned = it.Seq, scanned+1
				page.NextSince = max(page.NextSince, it.Seq)
			} else {
				f.After, page.NextSince, scanned = it.Seq, it.Seq, scanned+1
			}
			if w := ws[it.WorkareaID]; it.ShownTo(w.Reader, w.Admin) {
				page.Items = append(page.Items, it)
			}
		}
		if len(batch) < f.Limit {
			break
		}
	}
	return page, nil
}

// FeedPage is one feed read.
type FeedPage struct {
	Events     []journal.Stored
	NextSince  *int64
	NextBefore *int64
	Workarea   string
}

// Feed reads a workarea's feed: its journal events the caller may see
// (domain.Visible). Without Since and Before it polls forward from the
// caller's stored cursor and advances it; an explicit Since is honoured
// and advances it too; a read with Before walks back, newest first, and
// moves nothing.
func (s *Service) Feed(ctx context.Context, q domain.FeedQuery) (FeedPage, error) {
	c, err := auth.ContentCaller(ctx, "feed reads")
	if err != nil {
		return FeedPage{}, err
	}
	if err := q.Validate(); err != nil {
		return FeedPage{}, err
	}
	w, err := s.readable(ctx, q.Workarea)
	if err != nil {
		return FeedPage{}, err
	}
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return FeedPage{}, err
	}
	if err := s.settle(ctx, c.TenantID); err != nil {
		return FeedPage{}, err
	}
	backward := q.Before != nil
	var since, before int64
	if q.Since != nil {
		since = *q.Since
		head, err := s.Journal.Head(ctx, c.TenantID)
		if err != nil {
			return FeedPage{}, err
		}
		if since > head {
			return FeedPage{}, errs.Invalid("since %d is beyond the journal's head %d: keep a next_since the feed returned", since, head)
		}
	} else if !backward {
		if since, err = s.Repo.CursorGet(ctx, c.TenantID, c.PrincipalID, w.ID); err != nil {
			return FeedPage{}, fmt.Errorf("read feed cursor: %w", err)
		}
	}
	if backward {
		before = *q.Before
	}
	page := FeedPage{Events: []journal.Stored{}, Workarea: w.ID}
	pos := since
	if backward {
		pos = before
	}
	for scanned := 0; len(page.Events) < q.Limit && scanned < domain.MaxScan; {
		var batch []journal.Stored
		if backward {
			batch, err = s.Journal.InWorkarea(ctx, c.TenantID, w.ID, since, pos, domain.ScanPage, true)
		} else {
			batch, err = s.Journal.InWorkarea(ctx, c.TenantID, w.ID, pos, 0, domain.ScanPage, false)
		}
		if err != nil {
			return FeedPage{}, err
		}
		for _, e := range batch {
			if len(page.Events) == q.Limit {
				break
			}
			pos, scanned = e.Seq, scanned+1
			if visibleInFeed(e, c.KeyID, fence, q) {
				page.Events = append(page.Events, e)
			}
		}
		if len(batch) < domain.ScanPage {
			break
		}
	}
	if backward {
		if n := len(page.Events); n > 0 {
			oldest := page.Events[n-1].Seq
			page.NextBefore = &oldest
		}
		return page, nil
	}
	next := pos
	page.NextSince = &next
	if n := len(page.Events); n > 0 {
		first := page.Events[0].Seq
		page.NextBefore = &first
	}
	// A filtered read passed events it did not return: it leaves the
	// stored cursor alone, so an unfiltered poll still reads them.
	if q.Kind == "" && q.Session == "" {
		if err := s.Repo.CursorSet(ctx, c.TenantID, c.PrincipalID, w.ID, next, s.now()); err != nil {
			return FeedPage{}, fmt.Errorf("store feed cursor: %w", err)
		}
	}
	return page, nil
}

func visibleInFeed(e journal.Stored, callerKey string, fence scope.Fence, q domain.FeedQuery) bool {
	if domain.WorkingState(e.Type) || !domain.Visible(eventOf(e), callerKey, true, fence) {
		return false
	}
	if q.Kind != "" && domain.KindOf(e.Type) != q.Kind {
		return false
	}
	if q.Session != "" {
		var p struct {
			Session string `json:"session"`
		}
		if json.Unmarshal(e.Payload, &p) != nil || p.Session != q.Session {
			return false
		}
	}
	return true
}
