package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

func banNotFound() error {
	return errs.New(errs.NotFound, "bans are tenant-scoped; unknown, lifted and foreign bans are indistinguishable", "no live ban with that id in this tenant")
}

// AddBan bans a principal's submissions (admin on universe).
func (s *Service) AddBan(ctx context.Context, principal, reason string) (Ban, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" || len(reason) > 1000 {
		return Ban{}, errs.Invalid("reason is required (at most 1000 characters): bans are decisions others audit")
	}
	var out Ban
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		v, _, err := s.adminAtRoot(ctx)
		if err != nil {
			return err
		}
		p, err := s.repo.PrincipalByName(ctx, v.caller.TenantID, principal)
		if errors.Is(err, ErrNotFound) {
			return errs.New(errs.NotFound, "principals are tenant-scoped", "no principal named %q in this tenant", principal)
		}
		if err != nil {
			return fmt.Errorf("load principal: %w", err)
		}
		out = Ban{ID: ids.New(ids.Ban), Principal: p, Reason: reason, CreatedBy: v.caller.KeyID, CreatedAt: s.now().UTC().Truncate(time.Microsecond)}
		if err := s.repo.BanCreate(ctx, v.caller.TenantID, out); err != nil {
			if errors.Is(err, ErrConflict) {
				return errs.New(errs.BanExists, "one live ban per principal", "principal %q is already banned", principal)
			}
			return fmt.Errorf("create ban: %w", err)
		}
		return s.record(ctx, v.caller.TenantID, journal.Event{
			Type: "ban.add", Actor: v.caller.KeyID, Subject: map[string]any{"ban_id": out.ID},
			Payload: map[string]any{"principal": p.Name, "principal_id": p.ID, "reason": reason},
		})
	})
	return out, err
}

// LiftBan lifts a live ban (admin on universe).
func (s *Service) LiftBan(ctx context.Context, id string) (Ban, error) {
	if !ids.Has(ids.Ban, id) {
		return Ban{}, banNotFound()
	}
	var out Ban
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		v, _, err := s.adminAtRoot(ctx)
		if err != nil {
			return err
		}
		out, err = s.repo.BanLift(ctx, v.caller.TenantID, id, v.caller.KeyID, s.now())
		if errors.Is(err, ErrNotFound) {
			return banNotFound()
		}
		if err != nil {
			return fmt.Errorf("lift ban: %w", err)
		}
		return s.record(ctx, v.caller.TenantID, journal.Event{
			Type: "ban.lift", Actor: v.caller.KeyID, Subject: map[string]any{"ban_id": id},
			Payload: map[string]any{"principal_id": out.Principal.ID},
		})
	})
	return out, err
}

// ListBans lists the tenant's bans, lifted ones included (admin on universe).
func (s *Service) ListBans(ctx context.Context) ([]Ban, error) {
	v, _, err := s.adminAtRoot(ctx)
	if err != nil {
		return nil, err
	}
	return s.repo.BanList(ctx, v.caller.TenantID)
}

// Banned reports whether the caller's principal is banned, with the
// reason (admission checks it before anything else of a submission). It
// is part of the caller's access snapshot, so a check of access after it
// in the same request or unit of work reads nothing more.
func (s *Service) Banned(ctx context.Context) (bool, string, error) {
	v, err := s.readView(ctx)
	if err != nil {
		return false, "", err
	}
	if v.access.Ban == nil {
		return false, "", nil
	}
	return true, *v.access.Ban, nil
}
