package app

import (
	"context"
	"fmt"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
)

// PolicyAt returns the review policy in force at a workarea, inherited from
// the nearest ancestor that sets one (or the default), for a caller that
// can see the workarea.
func (s *Service) PolicyAt(ctx context.Context, ref string) (Workarea, domain.Policy, error) {
	w, err := s.Access.Workarea(ctx, ref)
	if err != nil {
		return w, domain.Policy{}, err
	}
	c, err := auth.ContentCaller(ctx, "review policies")
	if err != nil {
		return w, domain.Policy{}, err
	}
	p, err := s.Repo.PolicyAt(ctx, c.TenantID, w.IDPath)
	if err != nil {
		return w, p, fmt.Errorf("load review policy: %w", err)
	}
	p.SelfSignedDevelopment, err = s.Repo.SelfSignedDevelopment(ctx, c.TenantID)
	return w, p, err
}

// SetPolicy sets the review policy of a workarea and so of its subtree,
// down to the next workarea that sets its own (admin on the workarea).
func (s *Service) SetPolicy(ctx context.Context, ref string, p domain.Policy) (Workarea, domain.Policy, error) {
	if err := p.Validate(); err != nil {
		return Workarea{}, p, err
	}
	c, err := auth.ContentCaller(ctx, "review policies")
	if err != nil {
		return Workarea{}, p, err
	}
	var w Workarea
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		if w, err = s.adminOn(ctx, ref); err != nil {
			return err
		}
		if err := s.Repo.PolicySet(ctx, c.TenantID, w.ID, w.IDPath, p); err != nil {
			return fmt.Errorf("set review policy: %w", err)
		}
		return s.record(ctx, c.TenantID, journal.Event{
			Type: "policy.review", Actor: c.KeyID, Workarea: w.ID, Subject: map[string]any{"workarea_id": w.ID},
			Payload: map[string]any{"required_approvals": p.RequiredApprovals, "held_ttl_seconds": int64(p.HeldTTL / time.Second), "scan": p.Scan},
		})
	})
	return w, p, err
}

// SetSelfSignedDevelopment flips the tenant switch that lets authors review
// their own items in development workareas (marked self_signed). It needs
// admin on universe.
func (s *Service) SetSelfSignedDevelopment(ctx context.Context, on bool) error {
	c, err := auth.ContentCaller(ctx, "review settings")
	if err != nil {
		return err
	}
	return s.Tx.InTx(ctx, func(ctx context.Context) error {
		w, err := s.adminOn(ctx, "universe")
		if err != nil {
			return err
		}
		if err := s.Repo.SetSelfSignedDevelopment(ctx, c.TenantID, on); err != nil {
			return fmt.Errorf("set review settings: %w", err)
		}
		return s.record(ctx, c.TenantID, journal.Event{
			Type: "policy.self_signed_development", Actor: c.KeyID, Workarea: w.ID,
			Subject: map[string]any{"tenant_id": c.TenantID}, Payload: map[string]any{"enabled": on},
		})
	})
}

func (s *Service) adminOn(ctx context.Context, ref string) (Workarea, error) {
	w, err := s.Access.Workarea(ctx, ref)
	if err != nil {
		return w, err
	}
	if !w.Admin {
		return w, errs.New(errs.Denied, "admin verbs need admin effective access on the node (D7)", "this key has no admin access on workarea %s", w.ID)
	}
	return w, nil
}
