package app

import (
	"context"
	"errors"
	"time"

	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
)

// KnowledgeBase is the knowledge context: a workarea's knowledge base,
// which the brain tools reach with store "project". Its rules (review
// before anyone else reads a version, if_version at submission and at
// promotion) are its own.
type KnowledgeBase interface {
	Get(ctx context.Context, workarea, path, version string) (KBPage, error)
	Put(ctx context.Context, p PagePut) (KBPage, error)
	List(ctx context.Context, workarea, prefix, cursor string, limit int) (PageList, error)
}

// KBPage is a knowledge-base page version as the brain tools show it.
type KBPage struct {
	Workarea      string
	WorkareaPath  string
	Path          string
	Content       string
	Version       string
	State         string
	Deleted       bool
	ArtifactID    string
	Revision      int
	Size          int64
	Author        string
	SubmittedAt   time.Time
	PromotedAt    *time.Time
	BaseVersion   string
	StaleAfter    *time.Time
	SourceSession string
	OwnHeld       []HeldPage
}

// HeldPage is one of the caller's page versions waiting for review.
type HeldPage struct {
	Version       string
	ArtifactID    string
	Revision      int
	SubmittedAt   time.Time
	HeldExpiresAt time.Time
	Deleted       bool
}

// PagePut is a page write.
type PagePut struct {
	Workarea      string
	Path          string
	Content       string
	IfVersion     string
	StaleAfter    *time.Time
	SourceSession string
}

// PageList is a page of a knowledge base's listing.
type PageList struct {
	Workarea string
	Pages    []KBPage
	Next     string
}

// kbWorkarea is the workarea a store "project" call reaches: the one
// named, else the workarea of the caller key's active session.
func (s *Service) kbWorkarea(ctx context.Context, ref BrainRef) (string, error) {
	if s.KB == nil {
		return "", errs.Invalid("store \"project\": this deployment serves no knowledge base; use store \"session\"")
	}
	if ref.Session != "" {
		return "", errs.Invalid("session names a session brain; store \"project\" takes workarea (default: your active session's)")
	}
	if ref.Workarea != "" {
		return ref.Workarea, nil
	}
	c, err := auth.ContentCaller(ctx, "the knowledge base")
	if err != nil {
		return "", err
	}
	var wid string
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		id, err := s.activeBrain(ctx, c, "")
		if errs.Is(err, errs.SessionConflict) {
			return errs.Invalid("workarea is required with store \"project\" unless this key has one active session")
		}
		if err != nil {
			return err
		}
		sess, err := s.Repo.Get(ctx, c.TenantID, id)
		wid = sess.WorkareaID
		return err
	})
	return wid, err
}

// PageGet reads a knowledge-base page (brain_get store project).
func (s *Service) PageGet(ctx context.Context, ref BrainRef, path, version string) (KBPage, error) {
	w, err := s.kbWorkarea(ctx, ref)
	if err != nil {
		return KBPage{}, err
	}
	return s.KB.Get(ctx, w, path, version)
}

// PagePut writes a knowledge-base page version (brain_put store
// project): held for review.
func (s *Service) PagePut(ctx context.Context, ref BrainRef, p PagePut) (KBPage, error) {
	w, err := s.kbWorkarea(ctx, ref)
	if err != nil {
		return KBPage{}, err
	}
	p.Workarea = w
	return s.KB.Put(ctx, p)
}

// PageList lists a knowledge base's live pages (brain_list store project).
func (s *Service) PageList(ctx context.Context, ref BrainRef, prefix, cursor string, limit int) (PageList, error) {
	w, err := s.kbWorkarea(ctx, ref)
	if err != nil {
		return PageList{}, err
	}
	return s.KB.List(ctx, w, prefix, cursor, limit)
}

// Promote copies an entry of the caller's own session brain into a
// knowledge-base page (to, default the same path; /fs/ only) of the
// session's workarea (or the one named) that cites the session: a page
// version like any other, held for review (seed 002's brain_promote,
// which is brain_put with from: R1 keeps the verb off the surface).
func (s *Service) Promote(ctx context.Context, from BrainRef, path, to, workarea, ifVersion string, staleAfter *time.Time) (KBPage, error) {
	if s.KB == nil {
		return KBPage{}, errs.Invalid("store \"project\": this deployment serves no knowledge base")
	}
	sess, e, err := s.BrainGet(ctx, BrainRef{Store: domain.StoreSession, Session: from.Session, Workarea: from.Workarea}, path, "")
	if err != nil {
		return KBPage{}, err
	}
	if to == "" {
		to = path
	}
	if workarea == "" {
		workarea = sess.WorkareaID
	}
	return s.KB.Put(ctx, PagePut{Workarea: workarea, Path: to, Content: string(e.Content), IfVersion: ifVersion,
		StaleAfter: staleAfter, SourceSession: sess.ID})
}

// OwnsSession reports whether the session is the caller principal's and
// not pruned (search by session_id).
func (s *Service) OwnsSession(ctx context.Context, id string) (bool, error) {
	c, err := auth.ContentCaller(ctx, "search")
	if err != nil {
		return false, err
	}
	if !ids.Has(ids.Session, id) {
		return false, nil
	}
	sess, err := s.Repo.Get(ctx, c.TenantID, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return sess.OwnedBy(c.PrincipalID) && sess.Status != domain.Pruned, nil
}

// OwnSessions lists the caller principal's sessions that are not pruned
// (whose brains it reads), the most recently active first, at most limit:
// search confines brain hits to them.
func (s *Service) OwnSessions(ctx context.Context, limit int) ([]string, error) {
	c, err := auth.ContentCaller(ctx, "search")
	if err != nil {
		return nil, err
	}
	return s.Repo.Owned(ctx, c.TenantID, c.PrincipalID, limit)
}
