package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/omlhub/oml/contexts/knowledge/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
)

// Deps are the service's ports.
type Deps struct {
	Access    Access
	Admission Admission
	Repo      Repository
	Now       func() time.Time
}

// Service is the knowledge context's application service.
type Service struct{ Deps }

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{d}
}

// Rules named by knowledge-base refusals.
const (
	ruleRead    = "a knowledge-base page is read with reader access on its workarea; a missing workarea and a denied one answer alike (fail closed)"
	rulePage    = "a page exists once a version of it is promoted; until then only its author sees its held version (R3)"
	ruleVersion = "brain_get and brain_revert take a version brain_history listed"
)

// Page is a page version as read, with the caller's own versions waiting
// for review beside it.
type Page struct {
	domain.Version
	WorkareaPath string
	OwnHeld      []domain.Version
}

func workareaNotFound() error {
	return errs.New(errs.NotFound, ruleRead, "no readable workarea with that reference for this key")
}

func pageNotFound(path string) error {
	return errs.New(errs.NotFound, rulePage, "no page at %s in this workarea", path)
}

// readable resolves the workarea for a read: reader access, else
// access.not_found as for a workarea that does not exist.
func (s *Service) readable(ctx context.Context, ref string) (auth.Caller, Workarea, error) {
	c, err := auth.ContentCaller(ctx, "the knowledge base")
	if err != nil {
		return c, Workarea{}, err
	}
	if ref == "" {
		return c, Workarea{}, errs.Invalid("workarea is required")
	}
	w, err := s.Access.Workarea(ctx, ref)
	if err != nil {
		return c, w, err
	}
	if !w.Reader {
		return c, w, workareaNotFound()
	}
	return c, w, nil
}

// Get reads a page: the promoted head (with the caller's own held
// versions beside it), or a promoted version by its hash; a page no
// version of which is promoted yet is its author's own held version,
// marked held, and missing for everyone else.
func (s *Service) Get(ctx context.Context, ref, path, version string) (Page, error) {
	if err := domain.CheckPath(path); err != nil {
		return Page{}, err
	}
	c, w, err := s.readable(ctx, ref)
	if err != nil {
		return Page{}, err
	}
	if version != "" {
		if err := domain.CheckIfVersion(version); err != nil || version == domain.Absent {
			return Page{}, errs.Invalid("version: want sha256:<64 lowercase hex>, one brain_history listed")
		}
		v, err := s.Admission.ByVersion(ctx, c.TenantID, w.ID, path, version)
		if errors.Is(err, ErrNotFound) {
			return Page{}, errs.New(errs.NotFound, ruleVersion, "page %s has no promoted version %s", path, version)
		}
		if err != nil {
			return Page{}, fmt.Errorf("read page version: %w", err)
		}
		vs, err := s.withMeta(ctx, c.TenantID, []domain.Version{v})
		if err == nil {
			_, err = s.number(ctx, c.TenantID, w.ID, path, vs)
		}
		if err != nil {
			return Page{}, err
		}
		return Page{Version: vs[0], WorkareaPath: w.Path}, nil
	}
	head, err := s.Admission.Head(ctx, c.TenantID, w.ID, path)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Page{}, fmt.Errorf("read page head: %w", err)
	}
	live := err == nil && !head.Deleted()
	own, err := s.ownHeld(ctx, c, w.ID, path)
	if err != nil {
		return Page{}, err
	}
	var out Page
	switch {
	case live:
		out = Page{Version: head, WorkareaPath: w.Path, OwnHeld: own}
	case len(own) > 0:
		out = Page{Version: own[0], WorkareaPath: w.Path, OwnHeld: own}
	default:
		return Page{}, pageNotFound(path)
	}
	all, err := s.withMeta(ctx, c.TenantID, append([]domain.Version{out.Version}, out.OwnHeld...))
	if err == nil {
		_, err = s.number(ctx, c.TenantID, w.ID, path, all)
	}
	if err != nil {
		return Page{}, err
	}
	out.Version, out.OwnHeld = all[0], all[1:]
	return out, nil
}

// ownHeld is the caller's versions of the page still waiting for review,
// newest first (at most 10).
func (s *Service) ownHeld(ctx context.Context, c auth.Caller, workarea, path string) ([]domain.Version, error) {
	vs, err := s.Admission.Versions(ctx, c.TenantID, workarea, path, []string{domain.StateHeld}, c.PrincipalID, 0, 10, true)
	if err != nil {
		return nil, fmt.Errorf("read own held versions: %w", err)
	}
	now := s.Now()
	return slices.DeleteFunc(vs, func(v domain.Version) bool { return !now.Before(v.HeldExpiresAt) }), nil
}

// Put is a page write.
type Put struct {
	Workarea      string
	Path          string
	Content       string
	IfVersion     string
	StaleAfter    *time.Time
	SourceSession string
}

// Put submits a page version: held until an identity that did not write
// it approves it (R3). With if_version the promoted head must still be
// that version now and again at promotion (absent: no live page);
// without it the version written last wins (a version older than the
// promoted head is refused at promotion).
func (s *Service) Put(ctx context.Context, p Put) (domain.Version, error) {
	if err := domain.CheckPath(p.Path); err != nil {
		return domain.Version{}, err
	}
	if err := domain.CheckContent(p.Content); err != nil {
		return domain.Version{}, err
	}
	return s.submit(ctx, p)
}

// Delete submits a deletion of a live page: a held tombstone, promoted
// like any version; the page's versions stay in its history.
func (s *Service) Delete(ctx context.Context, ref, path, ifVersion string) (domain.Version, error) {
	if err := domain.CheckPath(path); err != nil {
		return domain.Version{}, err
	}
	c, w, err := s.readable(ctx, ref)
	if err != nil {
		return domain.Version{}, err
	}
	head, err := s.Admission.Head(ctx, c.TenantID, w.ID, path)
	if errors.Is(err, ErrNotFound) || (err == nil && head.Deleted()) {
		return domain.Version{}, pageNotFound(path)
	}
	if err != nil {
		return domain.Version{}, fmt.Errorf("read page head: %w", err)
	}
	return s.submit(ctx, Put{Workarea: w.ID, Path: path, IfVersion: ifVersion})
}

// Revert submits an earlier promoted version's content as a new version
// (a deleted page comes back the same way).
func (s *Service) Revert(ctx context.Context, ref, path, version, ifVersion string) (domain.Version, error) {
	if version == "" {
		return domain.Version{}, errs.Invalid("version is required: the promoted version to write back (brain_history lists them)")
	}
	src, err := s.Get(ctx, ref, path, version)
	if err != nil {
		return domain.Version{}, err
	}
	if src.Deleted() {
		return domain.Version{}, errs.Invalid("version %s is a deletion; revert to a version with content", version)
	}
	return s.submit(ctx, Put{Workarea: src.WorkareaID, Path: path, Content: src.Content, IfVersion: ifVersion})
}

func (s *Service) submit(ctx context.Context, p Put) (domain.Version, error) {
	if err := domain.CheckIfVersion(p.IfVersion); err != nil {
		return domain.Version{}, err
	}
	c, w, err := s.readable(ctx, p.Workarea)
	if err != nil {
		return domain.Version{}, err
	}
	now := s.Now()
	v, err := s.Admission.Submit(ctx, Submission{WorkareaID: w.ID, Path: p.Path, Content: p.Content, BaseVersion: p.IfVersion},
		func(ctx context.Context, v domain.Version) error {
			v.SourceSession, v.StaleAfter = p.SourceSession, p.StaleAfter
			return s.Repo.Insert(ctx, c.TenantID, v, now)
		})
	// A held version has no revision yet: its number counts other
	// identities' versions, which nobody else may learn of (R3).
	v.SourceSession, v.StaleAfter, v.Number = p.SourceSession, p.StaleAfter, 0
	return v, err
}

// number sets each version's revision: its place among the page's
// promoted versions (1, 2, …), 0 for one not promoted. It returns each
// promoted version's internal number by artifact id.
func (s *Service) number(ctx context.Context, tenant, workarea, path string, vs []domain.Version) (map[string]int, error) {
	promoted, err := s.Admission.Promoted(ctx, tenant, workarea, path)
	if err != nil {
		return nil, fmt.Errorf("read promoted versions: %w", err)
	}
	ord := make(map[string]int, len(promoted))
	internal := make(map[string]int, len(promoted))
	for i, p := range promoted {
		ord[p.ArtifactID], internal[p.ArtifactID] = i+1, p.Number
	}
	for i := range vs {
		vs[i].Number = ord[vs[i].ArtifactID]
	}
	return internal, nil
}

// Listing is a page of versions (a history) or of live pages (a
// listing) in one workarea.
type Listing struct {
	WorkareaID string
	Versions   []domain.Version
	Next       string
}

// History lists a page's promoted versions, newest first, deletions
// included; cursor is the next_cursor of the page before.
func (s *Service) History(ctx context.Context, ref, path, cursor string, limit int) (Listing, error) {
	if err := domain.CheckPath(path); err != nil {
		return Listing{}, err
	}
	limit, err := pageLimit(limit)
	if err != nil {
		return Listing{}, err
	}
	c, w, err := s.readable(ctx, ref)
	if err != nil {
		return Listing{}, err
	}
	internal, err := s.number(ctx, c.TenantID, w.ID, path, nil)
	if err != nil {
		return Listing{}, err
	}
	if len(internal) == 0 {
		return Listing{}, pageNotFound(path)
	}
	// The cursor is the version last listed (its artifact id, which no
	// demotion renumbers); the versions before it come next.
	before := 0
	if cursor != "" {
		n, ok := internal[cursor]
		if !ok {
			return Listing{}, errs.Invalid("cursor: not one brain_history returned (or its version was demoted since)")
		}
		before = n
	}
	vs, err := s.Admission.Versions(ctx, c.TenantID, w.ID, path, []string{domain.StatePromoted}, "", before, limit+1, false)
	if err != nil {
		return Listing{}, fmt.Errorf("read page history: %w", err)
	}
	if _, err := s.number(ctx, c.TenantID, w.ID, path, vs); err != nil {
		return Listing{}, err
	}
	out := Listing{WorkareaID: w.ID}
	if len(vs) > limit {
		vs = vs[:limit]
		out.Next = vs[limit-1].ArtifactID
	}
	out.Versions, err = s.withMeta(ctx, c.TenantID, vs)
	return out, err
}

// List lists a workarea's live pages in path order, under prefix;
// cursor is the next_cursor of the page before (a path).
func (s *Service) List(ctx context.Context, ref, prefix, cursor string, limit int) (Listing, error) {
	if err := domain.CheckPrefix(prefix); err != nil {
		return Listing{}, err
	}
	if cursor != "" {
		if err := domain.CheckPath(cursor); err != nil {
			return Listing{}, errs.Invalid("cursor: not one brain_list returned")
		}
	}
	limit, err := pageLimit(limit)
	if err != nil {
		return Listing{}, err
	}
	c, w, err := s.readable(ctx, ref)
	if err != nil {
		return Listing{}, err
	}
	within, err := s.Access.Readable(ctx)
	if err != nil {
		return Listing{}, err
	}
	vs, err := s.Admission.Heads(ctx, c.TenantID, HeadFilter{Within: within, Workareas: []string{w.ID}, AfterWorkarea: w.ID,
		AfterPath: cursor, Prefix: prefix, Limit: limit + 1})
	if err != nil {
		return Listing{}, fmt.Errorf("list pages: %w", err)
	}
	out := Listing{WorkareaID: w.ID, Versions: vs}
	if len(vs) > limit {
		out.Versions = vs[:limit]
		out.Next = vs[limit-1].Path
	}
	return out, nil
}

// Readable lists every live page the caller may read, in (workarea id,
// path) order after a position (the MCP resources listing).
func (s *Service) Readable(ctx context.Context, afterWorkarea, afterPath string, limit int) ([]domain.Version, error) {
	c, err := auth.ContentCaller(ctx, "the knowledge base")
	if err != nil {
		return nil, err
	}
	within, err := s.Access.Readable(ctx)
	if err != nil {
		return nil, err
	}
	return s.Admission.Heads(ctx, c.TenantID, HeadFilter{Within: within, AfterWorkarea: afterWorkarea, AfterPath: afterPath, Limit: limit})
}

func pageLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return domain.DefaultPage, nil
	case limit < 0 || limit > domain.MaxListPage:
		return 0, errs.Invalid("limit: 1–%d", domain.MaxListPage)
	}
	return limit, nil
}

func (s *Service) withMeta(ctx context.Context, tenant string, vs []domain.Version) ([]domain.Version, error) {
	if len(vs) == 0 {
		return vs, nil
	}
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.ArtifactID
	}
	meta, err := s.Repo.Meta(ctx, tenant, ids)
	if err != nil {
		return nil, fmt.Errorf("read page metadata: %w", err)
	}
	for i := range vs {
		m := meta[vs[i].ArtifactID]
		vs[i].SourceSession, vs[i].StaleAfter = m.SourceSession, m.StaleAfter
	}
	return vs, nil
}

// Stale bounds.
const (
	staleShown      = 10
	staleCandidates = 200
)

// StalePages are a workarea's live pages past their stale_after, the
// longest overdue first (at most 10), and how many more there are
// (capped: at least that many).
type StalePages struct {
	Pages  []domain.Version
	More   int
	Capped bool
}

// Stale lists a workarea's live pages whose promoted head is past its
// stale_after (the session brief's stale pages); the caller reads the
// workarea.
func (s *Service) Stale(ctx context.Context, ref string) (StalePages, error) {
	c, w, err := s.readable(ctx, ref)
	if err != nil {
		return StalePages{}, err
	}
	cands, err := s.Repo.StaleCandidates(ctx, c.TenantID, w.ID, s.Now(), staleCandidates)
	if err != nil {
		return StalePages{}, fmt.Errorf("stale pages: %w", err)
	}
	var out StalePages
	seen := map[string]bool{}
	for _, cand := range cands {
		if seen[cand.Path] {
			continue
		}
		seen[cand.Path] = true
		head, err := s.Admission.Head(ctx, c.TenantID, w.ID, cand.Path)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return StalePages{}, fmt.Errorf("read page head: %w", err)
		}
		if head.ArtifactID != cand.ArtifactID || head.Deleted() {
			continue // a newer version (or a deletion) replaced it
		}
		if len(out.Pages) == staleShown {
			out.More++
			continue
		}
		head.StaleAfter = &cand.StaleAfter
		out.Pages = append(out.Pages, head)
	}
	out.Capped = len(cands) == staleCandidates
	return out, nil
}
