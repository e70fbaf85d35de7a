package app

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

var tenantName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// Bootstrapped is what `oml-server bootstrap` prints.
type Bootstrapped struct {
	TenantID       string
	RootWorkareaID string
	AdminKeyID     string
	AdminKey       string
}

// bootstrapActor is the journal actor of events no key caused.
const bootstrapActor = "system:bootstrap"

// Bootstrap creates a tenant, its universe and an admin key holding admin
// and reader over universe, all journalled, in one transaction.
func (s *Service) Bootstrap(ctx context.Context, name string) (Bootstrapped, error) {
	if !tenantName.MatchString(name) {
		return Bootstrapped{}, errs.Invalid("tenant name %q: want 1–63 characters of a-z, 0-9, '_' or '-'", name)
	}
	var out Bootstrapped
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		tenant := ids.New(ids.Tenant)
		if err := s.repo.TenantCreate(ctx, tenant, name); err != nil {
			if errors.Is(err, ErrConflict) {
				return errs.New(errs.TenantExists, "tenant names are unique", "tenant %q already exists", name)
			}
			return fmt.Errorf("create tenant: %w", err)
		}
		if err := s.record(ctx, tenant, journal.Event{
			Type: "tenant.create", Actor: bootstrapActor,
			Subject: map[string]any{"tenant_id": tenant}, Payload: map[string]any{"name": name},
		}); err != nil {
			return err
		}
		root := domain.NewRoot(s.now())
		if err := s.repo.WorkareaCreate(ctx, tenant, root); err != nil {
			return fmt.Errorf("create universe: %w", err)
		}
		if err := s.record(ctx, tenant, journal.Event{
			Type: "workarea.create", Actor: bootstrapActor, Workarea: root.ID,
			Subject: map[string]any{"workarea_id": root.ID},
			Payload: map[string]any{"name": root.Name, "path": root.Path, "status": root.Status},
		}); err != nil {
			return err
		}
		admin, err := s.issue(ctx, tenant, "admin", domain.RoleAdmin, bootstrapActor)
		if err != nil {
			return err
		}
		for _, scope := range []domain.Scope{domain.ScopeAdmin, domain.ScopeReader} {
			g := Grant{ID: ids.New(ids.Grant), KeyID: admin.Key.ID, WorkareaID: root.ID, Scope: scope, Effect: domain.Allow, CreatedAt: s.now()}
			if _, _, err := s.repo.GrantCreate(ctx, tenant, g, bootstrapActor); err != nil {
				return fmt.Errorf("grant admin: %w", err)
			}
			epoch, err := s.repo.EpochBump(ctx, tenant)
			if err != nil {
				return fmt.Errorf("bump epoch: %w", err)
			}
			if err := s.repo.GrantStampEpoch(ctx, tenant, g.ID, epoch, false); err != nil {
				return fmt.Errorf("stamp grant epoch: %w", err)
			}
			if err := s.record(ctx, tenant, journal.Event{
				Type: "grant.add", Actor: bootstrapActor, Workarea: root.ID,
				Subject: map[string]any{"grant_id": g.ID},
				Payload: map[string]any{"key_id": admin.Key.ID, "workarea_id": root.ID, "scope": scope.String(), "effect": domain.Allow, "permission_epoch": epoch},
			}); err != nil {
				return err
			}
		}
		out = Bootstrapped{TenantID: tenant, RootWorkareaID: root.ID, AdminKeyID: admin.Key.ID, AdminKey: admin.Token}
		return nil
	})
	return out, err
}
