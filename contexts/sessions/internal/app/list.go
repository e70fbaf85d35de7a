package app

import (
	"context"
	"fmt"

	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/scope"
)

// Page sizes of session_list.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// List is session_list's query.
type List struct {
	Workarea string
	Status   string
	Limit    int
	Cursor   string
}

// Page is one page of sessions, newest first.
type Page struct {
	Sessions   []domain.Session
	NextCursor string
}

// List lists sessions in workareas the caller may read (under Workarea's
// subtree when given), newest first.
func (s *Service) List(ctx context.Context, q List) (Page, error) {
	c, err := auth.ContentCaller(ctx, "sessions")
	if err != nil {
		return Page{}, err
	}
	status, err := domain.ParseStatus(q.Status)
	if err != nil {
		return Page{}, err
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 1 || q.Limit > MaxLimit:
		return Page{}, errs.Invalid("limit: 1–%d", MaxLimit)
	}
	if q.Cursor != "" && !ids.Has(ids.Session, q.Cursor) {
		return Page{}, errs.Invalid("cursor: pass the next_cursor of the previous page")
	}
	lq := ListQuery{TenantID: c.TenantID, Status: status, After: q.Cursor, Limit: q.Limit + 1}
	if q.Workarea != "" {
		w, err := s.readable(ctx, q.Workarea)
		if err != nil {
			return Page{}, err
		}
		lq.Under = w.IDPath
	}
	if lq.Readable, err = s.Access.Subtrees(ctx, scope.Reader); err != nil {
		return Page{}, err
	}
	page := Page{Sessions: []domain.Session{}}
	if lq.Readable.Empty() {
		return page, nil
	}
	rows, err := s.Repo.List(ctx, lq)
	if err != nil {
		return Page{}, fmt.Errorf("list sessions: %w", err)
	}
	if len(rows) > q.Limit {
		rows = rows[:q.Limit]
		page.NextCursor = rows[len(rows)-1].ID
	}
	page.Sessions = rows
	return page, nil
}
