package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// Mine lists the caller's own submissions, newest first. Items past their
// expiry are settled before they are shown.
type Mine struct {
	Workarea string // ref; "" for all
	State    string
	Limit    int
	Cursor   string
}

// MaxMineLimit caps one page of own work.
const MaxMineLimit = 200

// MinePage is a page of own work and the cursor of the next one.
type MinePage struct {
	Items      []domain.Claim
	NextCursor string
}

// MyWork lists the caller's own submissions.
func (s *Service) MyWork(ctx context.Context, q Mine) (MinePage, error) {
	caller, err := auth.ContentCaller(ctx, "own-work view")
	if err != nil {
		return MinePage{}, err
	}
	f := MineFilter{Limit: q.Limit, Before: q.Cursor}
	switch {
	case f.Limit == 0:
		f.Limit = 50
	case f.Limit < 1 || f.Limit > MaxMineLimit:
		return MinePage{}, errs.New(errs.LimitSize, "pages are bounded", "limit must be 1–%d, got %d", MaxMineLimit, q.Limit)
	}
	if f.Before != "" && !ids.Has(ids.Artifact, f.Before) {
		return MinePage{}, errs.Invalid("cursor %q is not one this API returned", q.Cursor)
	}
	if q.State != "" {
		if f.State, err = domain.ParseState(q.State); err != nil {
			return MinePage{}, err
		}
	}
	if q.Workarea != "" {
		w, err := s.Access.Workarea(ctx, q.Workarea)
		if err != nil {
			return MinePage{}, err
		}
		f.WorkareaID = w.ID
	}
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return MinePage{}, err
	}
	items, err := s.Repo.Mine(ctx, caller.TenantID, caller.KeyID, f)
	if err != nil {
		return MinePage{}, fmt.Errorf("list own work: %w", err)
	}
	page := MinePage{Items: items[:0]}
	if len(items) == f.Limit {
		page.NextCursor = items[len(items)-1].ID
	}
	for _, c := range items {
		// The key wrote every row here, so its fence holds them all; the
		// predicate stays, as on every read path (D10).
		if !fence.Admits(c.SimulationID) {
			continue
		}
		if c, err = s.settle(ctx, c); err != nil {
			return MinePage{}, err
		}
		page.Items = append(page.Items, c)
	}
	return page, nil
}

// Artifact returns one claim as the caller may see it: its author always,
// readers of its workarea once promoted. Reviewers see held items only
// through their serve. Everything else is access.not_found (R3).
func (s *Service) Artifact(ctx context.Context, id string) (ArtifactView, error) {
	caller, err := auth.ContentCaller(ctx, "content view")
	if err != nil {
		return ArtifactView{}, err
	}
	if !ids.Has(ids.Artifact, id) {
		return ArtifactView{}, artifactNotFound()
	}
	c, err := s.Repo.ClaimGet(ctx, caller.TenantID, id)
	if errors.Is(err, ErrNotFound) {
		return ArtifactView{}, artifactNotFound()
	}
	if err != nil {
		return ArtifactView{}, fmt.Errorf("load artifact: %w", err)
	}
	if c, err = s.settle(ctx, c); err != nil {
		return ArtifactView{}, err
	}
	if ok, err := s.readable(ctx, caller.PrincipalID, c); err != nil || !ok {
		return ArtifactView{}, cmp.Or(err, artifactNotFound())
	}
	v := ArtifactView{Claim: c, Author: c.AuthorPrincipal == caller.PrincipalID}
	if v.Parents, err = s.Lineage.Parents(ctx, caller.TenantID, c.ID); err != nil {
		return ArtifactView{}, fmt.Errorf("load lineage: %w", err)
	}
	return v, nil
}

// readable reports whether the caller (of principal) may read c: never a
// row of a simulation outside its fence (D10); else its author always,
// readers of its workarea once promoted (R3).
func (s *Service) readable(ctx context.Context, principal string, c domain.Claim) (bool, error) {
	fence, err := s.Access.Fence(ctx)
	if err != nil || !fence.Admits(c.SimulationID) {
		return false, err
	}
	if c.AuthorPrincipal == principal {
		return true, nil
	}
	if c.State != domain.StatePromoted {
		return false, nil
	}
	readers, err := s.Access.Subtrees(ctx, scope.Reader)
	if err != nil {
		return false, err
	}
	return readers.Contains(c.WorkareaIDPath), nil
}

// ArtifactView is an artifact as shown: the claim, what it derives from,
// and whether the caller wrote it.
type ArtifactView struct {
	Claim   domain.Claim
	Parents []string
	Author  bool
}

// settle moves a held claim past its expiry to expired (journalled)
// before anyone is shown it, so no read shows an item as held that can no
// longer be promoted.
func (s *Service) settle(ctx context.Context, c domain.Claim) (domain.Claim, error) {
	now := s.now()
	if !c.Expired(now) {
		return c, nil
	}
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		cur, err := s.Repo.ClaimGetForUpdate(ctx, c.TenantID, c.ID)
		if err != nil {
			return fmt.Errorf("lock claim: %w", err)
		}
		if !cur.Expired(now) { // another replica settled it
			c = cur
			return nil
		}
		cur.State, cur.SettledAt = domain.StateExpired, &now
		if err := s.Repo.ClaimUpdate(ctx, cur); err != nil {
			return fmt.Errorf("expire claim: %w", err)
		}
		c = cur
		return s.recordExpiry(ctx, cur)
	})
	return c, err
}

func (s *Service) recordExpiry(ctx context.Context, c domain.Claim) error {
	if err := s.Index.Withdrawn(ctx, c.TenantID, c.ID); err != nil {
		return fmt.Errorf("drop staged claim: %w", err)
	}
	return s.record(ctx, c.TenantID, journal.Event{
		Type: "lifecycle.expire", Actor: "system:expiry", Workarea: c.WorkareaID, Subject: subject(c),
		Payload: map[string]any{"held_expires_at": c.HeldExpiresAt},
	})
}

// SweepExpired expires held items past their expiry, in batches, on any
// replica (rows are claimed with SKIP LOCKED). It returns how many it
// settled.
func (s *Service) SweepExpired(ctx context.Context, batch int) (int, error) {
	var n int
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		due, err := s.Repo.ExpireDue(ctx, s.now(), batch)
		if err != nil {
			return fmt.Errorf("expire due items: %w", err)
		}
		for _, c := range due {
			if err := s.recordExpiry(ctx, c); err != nil {
				return err
			}
		}
		n = len(due)
		return nil
	})
	return n, err
}

// Visibility is how the caller may see a claim in another context's read.
type Visibility int

// The visibilities: Absent (unknown, erased, or another writer's
// non-promoted claim: R3), BodyLess (promoted, outside the caller's read
// access: its id only), Readable.
const (
	Absent Visibility = iota
	BodyLess
	Readable
)

// ClaimView is a claim with how the caller may see it.
type ClaimView struct {
	Claim      domain.Claim
	Visibility Visibility
}

// View classifies claims for the caller (the lineage context's graph reads
// through it). Unknown ids are absent.
func (s *Service) View(ctx context.Context, ids []string) (map[string]ClaimView, error) {
	caller, err := auth.ContentCaller(ctx, "content view")
	if err != nil {
		return nil, err
	}
	claims, err := s.Repo.ClaimsByIDs(ctx, caller.TenantID, ids)
	if err != nil {
		return nil, fmt.Errorf("load claims: %w", err)
	}
	readable, err := s.Access.Subtrees(ctx, scope.Reader)
	if err != nil {
		return nil, err
	}
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ClaimView, len(claims))
	for _, c := range claims {
		v := ClaimView{Claim: c}
		switch {
		case !fence.Admits(c.SimulationID):
			continue // absent, not even body-less (D10)
		case c.State == domain.StateErased:
		case c.AuthorPrincipal == caller.PrincipalID:
			v.Visibility = Readable
		case c.State == domain.StatePromoted && readable.Contains(c.WorkareaIDPath):
			v.Visibility = Readable
		case c.State == domain.StatePromoted:
			v.Visibility = BodyLess
		}
		out[c.ID] = v
	}
	return out, nil
}

// RecentReadable lists the newest promoted claims under idPath that the
// caller may read.
func (s *Service) RecentReadable(ctx context.Context, idPath string, limit int) ([]domain.Claim, error) {
	caller, err := auth.ContentCaller(ctx, "content view")
	if err != nil {
		return nil, err
	}
	readable, err := s.Access.Subtrees(ctx, scope.Reader)
	if err != nil {
		return nil, err
	}
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return nil, err
	}
	claims, err := s.Repo.RecentPromoted(ctx, caller.TenantID, idPath, fence, limit)
	if err != nil {
		return nil, fmt.Errorf("recent claims: %w", err)
	}
	out := claims[:0]
	for _, c := range claims {
		if fence.Admits(c.SimulationID) && readable.Contains(c.WorkareaIDPath) {
			out = append(out, c)
		}
	}
	return out, nil
}

// CanReadContent reports whether the caller may read a claim's content,
// attachments included: its author, a reader of its workarea once it is
// promoted, or a reviewer it is served to right now.
func (s *Service) CanReadContent(ctx context.Context, artifact string) (bool, error) {
	caller, err := auth.ContentCaller(ctx, "content view")
	if err != nil {
		return false, err
	}
	views, err := s.View(ctx, []string{artifact})
	if err != nil {
		return false, err
	}
	v, ok := views[artifact]
	if !ok || v.Claim.State == domain.StateErased {
		return false, nil
	}
	if v.Visibility == Readable {
		return true, nil
	}
	if v.Claim.State != domain.StateHeld {
		return false, nil
	}
	return s.Repo.ServeLive(ctx, caller.TenantID, artifact, caller.KeyID, s.now())
}
