package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

// Demote takes a promoted claim out of recall at once (admin on its
// workarea; allowed on validated workareas, D8).
func (s *Service) Demote(ctx context.Context, id, reason string) (domain.Claim, error) {
	return s.lifecycle(ctx, id, reason, "lifecycle.demote", func(c *domain.Claim) error { return c.Demote(s.now()) })
}

// Erase removes a claim's text and attachment bindings and keeps a
// tombstone (admin on its workarea; allowed on validated workareas, D8).
// A promoted claim leaves recall in the same unit of work.
func (s *Service) Erase(ctx context.Context, id, reason string) (domain.Claim, error) {
	return s.lifecycle(ctx, id, reason, "lifecycle.erase", func(c *domain.Claim) error { return c.Erase(s.now()) })
}

func (s *Service) lifecycle(ctx context.Context, id, reason, event string, apply func(*domain.Claim) error) (domain.Claim, error) {
	caller, err := auth.ContentCaller(ctx, "lifecycle verbs")
	if err != nil {
		return domain.Claim{}, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" || len(reason) > 1000 {
		return domain.Claim{}, errs.Invalid("reason is required (at most 1000 characters): lifecycle decisions are audited")
	}
	if !ids.Has(ids.Artifact, id) {
		return domain.Claim{}, artifactNotFound()
	}
	var out domain.Claim
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		c, err := s.Repo.ClaimGetForUpdate(ctx, caller.TenantID, id)
		if errors.Is(err, ErrNotFound) {
			return artifactNotFound()
		}
		if err != nil {
			return fmt.Errorf("lock claim: %w", err)
		}
		// A simulation's row is unknown outside its audience, to the
		// workarea's admins too (D10).
		fence, err := s.Access.Fence(ctx)
		if err != nil {
			return err
		}
		if !fence.Admits(c.SimulationID) {
			return artifactNotFound()
		}
		w, err := s.Access.WorkareaByID(ctx, c.WorkareaID)
		if errs.Is(err, errs.NotFound) {
			return artifactNotFound()
		}
		if err != nil {
			return err
		}
		if !w.Admin {
			// Only a caller that can read the claim learns that it exists
			// (fail closed, no existence leak).
			if ok, err := s.readable(ctx, caller.PrincipalID, c); err != nil || !ok {
				return cmp.Or(err, artifactNotFound())
			}
			return errs.New(errs.Denied, "demote and erase are admin verbs on the claim's workarea (D7)",
				"this key has no admin access on workarea %s", w.ID)
		}
		wasPromoted := c.State == domain.StatePromoted
		if c.Kind.Versioned() {
			// The page's lock before the serving tier's, as a verdict takes
			// them: two lifecycle changes on one page see each other.
			if err := s.Repo.ClaimKeyLock(ctx, c.TenantID, c.WorkareaID, "", c.ClaimKey); err != nil {
				return fmt.Errorf("lock page versions: %w", err)
			}
		}
		if err := apply(&c); err != nil {
			return err
		}
		if err := s.Repo.ClaimUpdate(ctx, c); err != nil {
			return fmt.Errorf("update claim: %w", err)
		}
		if err := s.Index.Withdrawn(ctx, c.TenantID, c.ID); err != nil {
			return fmt.Errorf("withdraw from recall: %w", err)
		}
		if wasPromoted && c.Kind.Versioned() {
			// The page's (or document's) previous promoted version is its
			// head again: reads show it, so recall serves it too.
			if err := s.reindexHead(ctx, c); err != nil {
				return err
			}
		}
		if c.State == domain.StateErased {
			// Erasure removes the attachment bindings; content no other
			// claim carries is shredded.
			if err := s.Uploads.Release(ctx, c.TenantID, caller.KeyID, c.ID); err != nil {
				return fmt.Errorf("release attachments: %w", err)
			}
		}
		out = c
		return s.record(ctx, caller.TenantID, journal.Event{
			Type: event, Actor: caller.KeyID, Workarea: c.WorkareaID, Subject: subject(c),
			Payload: map[string]any{"reason": reason, "was_promoted": wasPromoted},
		})
	})
	return out, err
}

// reindexHead puts a page's or document's promoted head back in the
// serving tier after its newer head was demoted or erased (a tombstone
// keeps it out). Its embedding was dropped when it was superseded, so
// recall finds it by full text until a reindex.
func (s *Service) reindexHead(ctx context.Context, c domain.Claim) error {
	if err := s.Repo.ClaimKeyLock(ctx, c.TenantID, c.WorkareaID, "", c.ClaimKey); err != nil {
		return fmt.Errorf("lock page versions: %w", err)
	}
	head, err := s.Repo.PageHead(ctx, c.TenantID, c.WorkareaID, c.ClaimKey)
	if errors.Is(err, ErrNotFound) || (err == nil && (head.Tombstone() || head.Version > c.Version)) {
		return nil // no head left, a deletion, or c was not the head (the head is served already)
	}
	if err != nil {
		return fmt.Errorf("read page head: %w", err)
	}
	head.Text = indexedText(head.Text)
	if err := s.Index.Promoted(ctx, head); err != nil {
		return fmt.Errorf("index the page's head: %w", err)
	}
	return nil
}
