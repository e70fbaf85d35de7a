package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

// AddGrant is the admin verb that allows or denies a scope over a subtree.
type AddGrant struct {
	KeyID    string
	Workarea string
	Scope    string
	Effect   string
}

// GrantResult is a grant and the epoch it took effect at.
type GrantResult struct {
	Grant   Grant
	Created bool
	Epoch   int64
}

// AddGrant records a grant; an identical live grant is returned as is.
func (s *Service) AddGrant(ctx context.Context, cmd AddGrant) (GrantResult, error) {
	scope, ok := domain.ParseScope(cmd.Scope)
	if !ok {
		return GrantResult{}, errs.Invalid("scope %q: want one of reader, writer, dreamer.propose, dreamer.review, admin", cmd.Scope)
	}
	effect, ok := domain.ParseEffect(cmd.Effect)
	if !ok {
		return GrantResult{}, errs.Invalid("effect %q: want allow or deny", cmd.Effect)
	}
	var out GrantResult
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		v, err := s.viewOf(ctx)
		if err != nil {
			return err
		}
		w, _, err := s.visible(ctx, v, cmd.Workarea, domain.ScopeAdmin)
		if err != nil {
			return err
		}
		k, err := s.keyIn(ctx, v.caller.TenantID, cmd.KeyID)
		if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return errs.Invalid("key %s is revoked; grants to it would never apply", k.ID)
		}
		g := Grant{ID: ids.New(ids.Grant), KeyID: k.ID, WorkareaID: w.ID, Scope: scope, Effect: effect, CreatedAt: s.now()}
		id, created, err := s.repo.GrantCreate(ctx, v.caller.TenantID, g, v.caller.KeyID)
		if err != nil {
			return fmt.Errorf("create grant: %w", err)
		}
		g.ID = id
		out = GrantResult{Grant: g, Created: created}
		if !created {
			out.Epoch, err = s.repo.EpochGet(ctx, v.caller.TenantID)
			return err
		}
		if out.Epoch, err = s.repo.EpochBump(ctx, v.caller.TenantID); err != nil {
			return fmt.Errorf("bump epoch: %w", err)
		}
		if err := s.repo.GrantStampEpoch(ctx, v.caller.TenantID, id, out.Epoch, false); err != nil {
			return fmt.Errorf("stamp grant epoch: %w", err)
		}
		return s.record(ctx, v.caller.TenantID, journal.Event{
			Type: "grant.add", Actor: v.caller.KeyID, Workarea: w.ID,
			Subject: map[string]any{"grant_id": id},
			Payload: map[string]any{"key_id": k.ID, "workarea_id": w.ID, "scope": cmd.Scope, "effect": cmd.Effect, "permission_epoch": out.Epoch},
		})
	})
	return out, err
}

// RemoveGrant removes a live grant.
func (s *Service) RemoveGrant(ctx context.Context, id string) (GrantResult, error) {
	var out GrantResult
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		v, err := s.viewOf(ctx)
		if err != nil {
			return err
		}
		g, err := s.grantIn(ctx, v.caller.TenantID, id)
		if err != nil {
			return err
		}
		if _, _, err := s.visible(ctx, v, g.WorkareaID, domain.ScopeAdmin); err != nil {
			if errs.Is(err, errs.NotFound) {
				return grantNotFound()
			}
			return err
		}
		removed, err := s.repo.GrantRemove(ctx, v.caller.TenantID, id, v.caller.KeyID, s.now())
		if err != nil {
			return fmt.Errorf("remove grant: %w", err)
		}
		if !removed {
			return grantNotFound()
		}
		if out.Epoch, err = s.repo.EpochBump(ctx, v.caller.TenantID); err != nil {
			return fmt.Errorf("bump epoch: %w", err)
		}
		if err := s.repo.GrantStampEpoch(ctx, v.caller.TenantID, id, out.Epoch, true); err != nil {
			return fmt.Errorf("stamp grant epoch: %w", err)
		}
		out.Grant = g
		return s.record(ctx, v.caller.TenantID, journal.Event{
			Type: "grant.remove", Actor: v.caller.KeyID, Workarea: g.WorkareaID,
			Subject: map[string]any{"grant_id": id},
			Payload: map[string]any{"key_id": g.KeyID, "workarea_id": g.WorkareaID, "scope": g.Scope.String(), "effect": g.Effect, "permission_epoch": out.Epoch},
		})
	})
	return out, err
}

func grantNotFound() error {
	return errs.New(errs.NotFound, "grants are tenant-scoped; unknown, removed and foreign grants are indistinguishable", "no live grant with that id in this tenant")
}

func (s *Service) grantIn(ctx context.Context, tenant, id string) (Grant, error) {
	if !ids.Has(ids.Grant, id) {
		return Grant{}, grantNotFound()
	}
	g, err := s.repo.GrantGet(ctx, tenant, id)
	if errors.Is(err, ErrNotFound) || (err == nil && g.RemovedAt != nil) {
		return Grant{}, grantNotFound()
	}
	if err != nil {
		return Grant{}, fmt.Errorf("load grant: %w", err)
	}
	return g, nil
}

// GrantQuery selects grants to list: of a key, on a workarea (id or
// path), or both; live now, or in force at Epoch; a page of Limit after
// Cursor.
type GrantQuery struct {
	KeyID    string
	Workarea string
	Epoch    *int64
	Cursor   string
	Limit    int
}

// The bounds of a grant listing.
const (
	DefaultGrantPage = 100
	MaxGrantPage     = 500
)

// GrantsPage is one page of a grant listing; NextCursor continues it (""
// at the end).
type GrantsPage struct {
	Grants     []ListedGrant
	NextCursor string
	Epoch      int64
}

// ListGrants lists grants for an admin: on a workarea it administers, or
// of a key (a tenant administrator: admin on universe).
func (s *Service) ListGrants(ctx context.Context, q GrantQuery) (GrantsPage, error) {
	switch {
	case q.KeyID == "" && q.Workarea == "":
		return GrantsPage{}, errs.Invalid("name a key_id, a workarea or both")
	case q.Limit == 0:
		q.Limit = DefaultGrantPage
	case q.Limit < 0 || q.Limit > MaxGrantPage:
		return GrantsPage{}, errs.New(errs.LimitCeiling, "a grant listing is bounded: limit 1–500", "limit %d is outside 1–%d", q.Limit, MaxGrantPage)
	}
	if q.Cursor != "" && !ids.Has(ids.Grant, q.Cursor) {
		return GrantsPage{}, errs.Invalid("cursor: not one this listing gave (want a next_cursor)")
	}
	var out GrantsPage
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		v, err := s.viewOf(ctx)
		if err != nil {
			return err
		}
		f := GrantFilter{KeyID: q.KeyID, AtEpoch: -1, AfterID: q.Cursor, Limit: q.Limit + 1}
		if q.Workarea != "" {
			w, _, err := s.visible(ctx, v, q.Workarea, domain.ScopeAdmin)
			if err != nil {
				return err
			}
			f.WorkareaID = w.ID
		} else if _, _, err := s.adminAtRoot(ctx); err != nil {
			return err
		}
		if q.KeyID != "" {
			if _, err := s.keyIn(ctx, v.caller.TenantID, q.KeyID); err != nil {
				return err
			}
		}
		if out.Epoch, err = s.repo.EpochGet(ctx, v.caller.TenantID); err != nil {
			return err
		}
		if q.Epoch != nil {
			if *q.Epoch < 0 || *q.Epoch > out.Epoch {
				return errs.Invalid("epoch %d: want 0–%d (the tenant's permission_epoch now)", *q.Epoch, out.Epoch)
			}
			f.AtEpoch, out.Epoch = *q.Epoch, *q.Epoch
		}
		gs, err := s.repo.GrantsList(ctx, v.caller.TenantID, f)
		if err != nil {
			return fmt.Errorf("list grants: %w", err)
		}
		if len(gs) > q.Limit {
			gs, out.NextCursor = gs[:q.Limit], gs[q.Limit-1].ID
		}
		out.Grants = gs
		return nil
	})
	return out, err
}
