package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// QueueEntry is what waits for the calling reviewer in one workarea.
type QueueEntry struct {
	Workarea Workarea
	Claims   int // held items, leased ones included
	Edges    int // pending edges from this workarea, leased ones included
	Leased   int // of those, leased to a reviewer now
	Oldest   time.Time
}

// Queue counts what waits for the caller in each workarea it reviews,
// oldest first: held items its principal neither wrote nor judged, and
// pending edges it did not propose. R2's closure check runs when an item
// is served, so a counted item may still be passed over for this caller.
func (s *Service) Queue(ctx context.Context) ([]QueueEntry, error) {
	caller, err := auth.ContentCaller(ctx, "reviews")
	if err != nil {
		return nil, err
	}
	reviewable, err := s.Access.Subtrees(ctx, scope.DreamerReview)
	if err != nil {
		return nil, err
	}
	if reviewable.Empty() {
		return nil, errs.New(errs.Denied, "the review queue needs dreamer.review effective access (D7, D14)",
			"this key holds dreamer.review on no workarea")
	}
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	claims, err := s.Repo.QueueCounts(ctx, caller.TenantID, QueueFilter{Within: reviewable, Principal: caller.PrincipalID, Fence: fence, Now: now})
	if err != nil {
		return nil, fmt.Errorf("count held items: %w", err)
	}
	edges, err := s.Lineage.EdgeQueue(ctx, caller.TenantID, caller.PrincipalID, reviewable, now)
	if err != nil {
		return nil, fmt.Errorf("count pending edges: %w", err)
	}
	by := map[string]*QueueEntry{}
	add := func(c QueueCount, edge bool) {
		e := by[c.WorkareaID]
		if e == nil {
			e = &QueueEntry{Workarea: Workarea{ID: c.WorkareaID}, Oldest: c.Oldest}
			by[c.WorkareaID] = e
		}
		if edge {
			e.Edges += c.Waiting
		} else {
			e.Claims += c.Waiting
		}
		e.Leased += c.Leased
		if c.Oldest.Before(e.Oldest) {
			e.Oldest = c.Oldest
		}
	}
	for _, c := range claims {
		add(c, false)
	}
	for _, c := range edges {
		add(c, true)
	}
	ws, err := s.Access.WorkareasByIDs(ctx, slices.Collect(maps.Keys(by)))
	if err != nil {
		return nil, err
	}
	out := make([]QueueEntry, 0, len(by))
	for id, e := range by {
		w, ok := ws[id]
		if !ok || w.Status == "validated" {
			// Gone from view since the counts (a revoke), or frozen: a
			// validated workarea's items are served to nobody (D8), so
			// they wait for no reviewer.
			continue
		}
		e.Workarea = w
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b QueueEntry) int {
		if c := a.Oldest.Compare(b.Oldest); c != 0 {
			return c
		}
		return strings.Compare(a.Workarea.Path, b.Workarea.Path)
	})
	return out, nil
}

// Release gives a serve back: the serve is consumed without a verdict and
// its item returns to the queue at once, for any reviewer (this one too:
// it is still the oldest). Only the served key may release; an unknown or
// foreign serve answers as a missing one, a consumed or expired serve with
// the verdict's refusals.
func (s *Service) Release(ctx context.Context, serveID string) (domain.Serve, error) {
	caller, err := auth.ContentCaller(ctx, "reviews")
	if err != nil {
		return domain.Serve{}, err
	}
	var out domain.Serve
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		now := s.now()
		srv, err := s.consumeOwnServe(ctx, caller, serveID, now)
		if err != nil {
			return err
		}
		if err := s.Repo.ServeRelease(ctx, caller.TenantID, srv.ID, now); err != nil {
			return fmt.Errorf("release serve: %w", err)
		}
		ev := journal.Event{Type: "review.release", Actor: caller.KeyID, Payload: map[string]any{"serve_id": srv.ID}}
		if srv.EdgeID != "" {
			if err := s.Lineage.ReleaseEdge(ctx, caller.TenantID, srv.EdgeID, srv.ExpiresAt); err != nil {
				return fmt.Errorf("release edge: %w", err)
			}
			ev.Subject = map[string]any{"edge_id": srv.EdgeID}
		} else {
			c, err := s.Repo.ClaimGetForUpdate(ctx, caller.TenantID, srv.ArtifactID)
			if err != nil {
				return fmt.Errorf("lock claim: %w", err)
			}
			if err := s.Repo.ClaimLeaseClear(ctx, caller.TenantID, c.ID, srv.ExpiresAt); err != nil {
				return fmt.Errorf("release claim: %w", err)
			}
			ev.Workarea, ev.Subject = c.WorkareaID, subject(c)
		}
		out = srv
		return s.record(ctx, caller.TenantID, ev)
	})
	return out, err
}

// ShowServe shows an open serve to its reviewer again (a page reloaded):
// the same item the serve answered, read as it is now. Another key's or an
// unknown serve is access.not_found; a consumed or expired one says so;
// the reviewer must still hold dreamer.review on the item.
func (s *Service) ShowServe(ctx context.Context, serveID string) (Served, error) {
	caller, err := auth.ContentCaller(ctx, "reviews")
	if err != nil {
		return Served{}, err
	}
	reviewable, err := s.Access.Subtrees(ctx, scope.DreamerReview)
	if err != nil {
		return Served{}, err
	}
	var out Served
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		srv, err := s.Repo.ServeGetForUpdate(ctx, caller.TenantID, serveID)
		if errors.Is(err, ErrNotFound) || (err == nil && srv.Reviewer.KeyID != caller.KeyID) {
			return errs.New(errs.NotFound, "a serve_id is the served key's alone (D14); unknown and foreign serves are indistinguishable",
				"no serve with that id for this key")
		}
		if err != nil {
			return fmt.Errorf("load serve: %w", err)
		}
		if err := (&srv).Consume(s.now()); err != nil { // a copy: only the checks run
			return err
		}
		out.Serve = srv
		if srv.EdgeID != "" {
			e, err := s.Lineage.ServedEdge(ctx, caller.TenantID, srv.EdgeID, reviewable)
			if err != nil {
				return err
			}
			out.Edge = &e
			return nil
		}
		c, err := s.Repo.ClaimGet(ctx, caller.TenantID, srv.ArtifactID)
		if err != nil {
			return fmt.Errorf("load claim: %w", err)
		}
		ws, err := s.Access.WorkareasByIDs(ctx, []string{c.WorkareaID})
		if err != nil {
			return err
		}
		if w, ok := ws[c.WorkareaID]; !ok || !reviewable.Contains(w.IDPath) {
			return errs.New(errs.Denied, "a served item is shown to a reviewer with dreamer.review effective access on it now (D7, D14)",
				"this key no longer holds dreamer.review on the workarea of %s", c.ID)
		}
		out.Claim = c
		out.Parents, err = s.Lineage.Parents(ctx, caller.TenantID, c.ID)
		return err
	})
	if err != nil {
		return Served{}, err
	}
	out.Serve.ConsumedAt = nil
	if out.Edge == nil && len(out.Claim.Attachments) > 0 {
		out.Material = s.reviewMaterial(ctx, out.Claim)
	}
	return out, nil
}
