package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

// Served is an item leased to the calling reviewer: a claim with what it
// derives from directly (the closure checked is in the serve), or an edge.
type Served struct {
	Serve   domain.Serve
	Claim   domain.Claim
	Parents []string
	Edge    *Edge
	// Material is each attachment as the reviewer reads it.
	Material []ReviewMaterial
}

// closureLimit bounds the lineage walked for one independence check.
const closureLimit = 1024

// candidateBatches × batch is how far down the queue one serve looks.
const (
	candidateBatch   = 16
	candidateBatches = 8
)

// ServeNext leases the oldest held item the caller may review (D14): held
// and unexpired, inside the caller's dreamer.review subtrees, not in a
// validated workarea, not already leased or judged by the caller's
// principal, and independent of the caller (R2: not its author, not the
// author of anything in its lineage closure). ok is false when there is
// nothing to serve.
func (s *Service) ServeNext(ctx context.Context) (Served, bool, error) {
	caller, err := contentCaller(ctx, "reviews")
	if err != nil {
		return Served{}, false, err
	}
	reviewable, err := s.Access.Subtrees(ctx, "dreamer.review")
	if err != nil {
		return Served{}, false, err
	}
	if len(reviewable.Allow) == 0 {
		return Served{}, false, errs.New(errs.Denied, "serving needs dreamer.review effective access (D7, D14)",
			"this key holds dreamer.review on no workarea")
	}
	var out Served
	var found bool
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		out, found = Served{}, false
		now := s.now()
		var skip []string
		for range candidateBatches {
			batch, err := s.Repo.QueueCandidates(ctx, caller.TenantID, QueueFilter{
				Within: reviewable, Principal: caller.PrincipalID, Skip: skip, Now: now, Limit: candidateBatch,
			})
			if err != nil {
				return fmt.Errorf("review queue: %w", err)
			}
			for _, c := range batch {
				srv, ok, err := s.eligible(ctx, caller, c, now)
				if err != nil {
					return err
				}
				if !ok {
					skip = append(skip, c.ID)
					continue
				}
				if err := s.Repo.ServeInsert(ctx, caller.TenantID, srv); errors.Is(err, ErrConflict) {
					skip = append(skip, c.ID) // another reviewer won it
					continue
				} else if err != nil {
					return fmt.Errorf("lease item: %w", err)
				}
				parents, err := s.Lineage.Parents(ctx, caller.TenantID, c.ID)
				if err != nil {
					return fmt.Errorf("load lineage: %w", err)
				}
				out, found = Served{Serve: srv, Claim: c, Parents: parents}, true
				return s.record(ctx, caller.TenantID, journal.Event{
					Type: "review.serve", Actor: caller.KeyID, Workarea: c.WorkareaID, Subject: subject(c),
					Payload: map[string]any{"serve_id": srv.ID, "expires_at": srv.ExpiresAt, "self_signed": srv.SelfSigned},
				})
			}
			if len(batch) < candidateBatch {
				break
			}
		}
		// No claim to review: a pending edge, ratified by a reviewer on
		// both endpoints who is not its proposer (R2).
		e, ok, err := s.Lineage.NextEdge(ctx, caller.TenantID, caller.PrincipalID, reviewable, now, now.Add(s.cfg.ServeTTL))
		if err != nil || !ok {
			return err
		}
		srv := domain.Serve{
			ID: ids.New(ids.Serve), EdgeID: e.ID, Reviewer: domain.Reviewer{KeyID: caller.KeyID, Principal: caller.PrincipalID},
			ServedAt: now, ExpiresAt: now.Add(s.cfg.ServeTTL),
		}
		if err := s.Repo.ServeInsert(ctx, caller.TenantID, srv); err != nil {
			return fmt.Errorf("lease edge: %w", err)
		}
		out, found = Served{Serve: srv, Edge: &e}, true
		return s.record(ctx, caller.TenantID, journal.Event{
			Type: "review.serve", Actor: caller.KeyID, Subject: map[string]any{"edge_id": e.ID},
			Payload: map[string]any{"serve_id": srv.ID, "expires_at": srv.ExpiresAt},
		})
	})
	if err == nil && found && out.Edge == nil && len(out.Claim.Attachments) > 0 {
		out.Material = s.reviewMaterial(ctx, out.Claim)
	}
	return out, found, err
}

// reviewMaterial reads the claim's attachments for its reviewer and scans
// their text. The serve is already leased, so a store outage degrades the
// material (the reviewer can ask again) rather than failing the serve.
func (s *Service) reviewMaterial(ctx context.Context, c domain.Claim) []ReviewMaterial {
	material, err := s.Uploads.Review(ctx, c.TenantID, c.ID)
	if err != nil {
		out := make([]ReviewMaterial, len(c.Attachments))
		for i, a := range c.Attachments {
			out[i] = ReviewMaterial{Attachment: a, Kind: "unavailable", Note: "review material could not be read now; serve again: " + errs.From(err).Message}
		}
		return out
	}
	for i := range material {
		if material[i].Text != "" {
			material[i].Findings = domain.Scan(material[i].Text)
		}
	}
	return material
}

// eligible applies the checks the queue query cannot: the workarea's
// status and policy, and independence over the lineage closure.
func (s *Service) eligible(ctx context.Context, caller auth.Caller, c domain.Claim, now time.Time) (domain.Serve, bool, error) {
	w, err := s.Access.WorkareaByID(ctx, c.WorkareaID)
	if errs.Is(err, errs.NotFound) {
		return domain.Serve{}, false, nil
	}
	if err != nil {
		return domain.Serve{}, false, err
	}
	if w.Status == "validated" {
		return domain.Serve{}, false, nil
	}
	policy, err := s.Repo.PolicyAt(ctx, caller.TenantID, c.WorkareaIDPath)
	if err != nil {
		return domain.Serve{}, false, fmt.Errorf("load review policy: %w", err)
	}
	if policy.SelfSignedDevelopment, err = s.Repo.SelfSignedDevelopment(ctx, caller.TenantID); err != nil {
		return domain.Serve{}, false, fmt.Errorf("load tenant review settings: %w", err)
	}
	closure, err := s.Lineage.Closure(ctx, caller.TenantID, c.ID, closureLimit)
	if err != nil {
		return domain.Serve{}, false, fmt.Errorf("lineage closure: %w", err)
	}
	ancestors, err := s.Repo.ClaimsByIDs(ctx, caller.TenantID, closure)
	if err != nil {
		return domain.Serve{}, false, fmt.Errorf("load lineage authors: %w", err)
	}
	authors := make([]string, 0, len(ancestors))
	for _, a := range ancestors {
		authors = append(authors, a.AuthorPrincipal)
	}
	r := domain.Reviewer{KeyID: caller.KeyID, Principal: caller.PrincipalID}
	ok, self := domain.Independence(c, r, authors, w.Status == "development", policy)
	if !ok {
		return domain.Serve{}, false, nil
	}
	return domain.Serve{
		ID: ids.New(ids.Serve), ArtifactID: c.ID, Reviewer: r, SelfSigned: self,
		ServedAt: now, ExpiresAt: now.Add(s.cfg.ServeTTL), Closure: closure,
	}, true, nil
}

// Decision is the outcome of a verdict: on a claim, or on an edge.
type Decision struct {
	Claim   domain.Claim
	Edge    *Edge
	Verdict domain.Verdict
}

// Verdict records the calling reviewer's verdict on its serve. The first
// verdict consumes the serve; a second is review.serve_consumed, a late one
// review.serve_expired; a serve of another key is access.not_found. The
// last required approval promotes the claim and tells the serving tier in
// the same unit of work.
func (s *Service) Verdict(ctx context.Context, serveID, verdict, reason string) (Decision, error) {
	caller, err := contentCaller(ctx, "reviews")
	if err != nil {
		return Decision{}, err
	}
	v, err := domain.ParseVerdict(verdict)
	if err != nil {
		return Decision{}, err
	}
	if len(reason) > 4096 {
		return Decision{}, errs.Invalid("reason is longer than 4096 bytes")
	}
	var out Decision
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		srv, err := s.Repo.ServeGetForUpdate(ctx, caller.TenantID, serveID)
		if errors.Is(err, ErrNotFound) || (err == nil && srv.Reviewer.KeyID != caller.KeyID) {
			return errs.New(errs.NotFound, "a serve_id is the served key's alone (D14); unknown and foreign serves are indistinguishable",
				"no serve with that id for this key")
		}
		if err != nil {
			return fmt.Errorf("load serve: %w", err)
		}
		now := s.now()
		if err := srv.Consume(now); err != nil {
			return err
		}
		if srv.EdgeID != "" {
			if err := s.Repo.ServeDecide(ctx, caller.TenantID, srv, v, reason); err != nil {
				return fmt.Errorf("record verdict: %w", err)
			}
			e, err := s.Lineage.DecideEdge(ctx, caller.TenantID, srv.EdgeID, v == domain.Approve, caller.KeyID)
			out = Decision{Edge: &e, Verdict: v}
			return err
		}
		c, err := s.Repo.ClaimGetForUpdate(ctx, caller.TenantID, srv.ArtifactID)
		if err != nil {
			return fmt.Errorf("lock claim: %w", err)
		}
		if err := c.Decide(v, srv.SelfSigned, now); err != nil {
			return err
		}
		if err := s.Repo.ServeDecide(ctx, caller.TenantID, srv, v, reason); err != nil {
			return fmt.Errorf("record verdict: %w", err)
		}
		if err := s.Repo.ClaimUpdate(ctx, c); err != nil {
			return fmt.Errorf("update claim: %w", err)
		}
		switch c.State {
		case domain.StatePromoted:
			if err := s.Index.Promoted(ctx, c); err != nil {
				return fmt.Errorf("index promoted claim: %w", err)
			}
		case domain.StateRejected:
			if err := s.Index.Withdrawn(ctx, c.TenantID, c.ID); err != nil {
				return fmt.Errorf("drop staged claim: %w", err)
			}
		}
		out = Decision{Claim: c, Verdict: v}
		return s.record(ctx, caller.TenantID, verdictEvent(caller, srv, c, v, reason))
	})
	return out, err
}

func verdictEvent(caller auth.Caller, srv domain.Serve, c domain.Claim, v domain.Verdict, reason string) journal.Event {
	typ := "review.approve"
	switch c.State {
	case domain.StatePromoted:
		typ = "lifecycle.promote"
	case domain.StateRejected:
		typ = "lifecycle.reject"
	}
	return journal.Event{
		Type: typ, Actor: caller.KeyID, Workarea: c.WorkareaID, Subject: subject(c),
		Payload: map[string]any{
			"serve_id": srv.ID, "verdict": v, "reason": reason, "approvals": c.Approvals,
			"required_approvals": c.RequiredApprovals, "self_signed": srv.SelfSigned, "closure": srv.Closure,
		},
	}
}
