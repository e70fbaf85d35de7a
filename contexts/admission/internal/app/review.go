package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
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
	return s.ServeNextIn(ctx, "", nil)
}

// MaxServeSkip bounds the ids a serve may be asked to pass over.
const MaxServeSkip = 100

// ServeNextIn is ServeNext confined to the subtree of one workarea (id or
// path; "" is every subtree the caller reviews). A workarea the caller
// cannot see is access.not_found; one it sees but reviews nowhere in is
// access.denied.
func (s *Service) ServeNextIn(ctx context.Context, workarea string, pass []string) (Served, bool, error) {
	if len(pass) > MaxServeSkip {
		return Served{}, false, errs.Invalid("skip: at most %d ids, got %d", MaxServeSkip, len(pass))
	}
	caller, err := auth.ContentCaller(ctx, "reviews")
	if err != nil {
		return Served{}, false, err
	}
	var out Served
	var found bool
	// An item whose closure is over the bound can never be reviewed: it
	// expires (fail closed) once this serve commits, so it does not hold
	// the head of the queue; when nothing else is served, the reviewer is
	// told why rather than "empty".
	var bounded error
	var unreviewable []domain.Claim
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		out, found, bounded, unreviewable = Served{}, false, nil, nil
		// The caller's access is read inside the unit of work, once per
		// attempt: the candidates' checks below use the same memoized view.
		// The caller's simulation fence is read with its grants: one
		// round trip.
		var reviewable Subtrees
		var fence scope.Fence
		err := s.Reads.Together(ctx,
			func(ctx context.Context) (err error) {
				reviewable, err = s.Access.Subtrees(ctx, scope.DreamerReview)
				return err
			},
			func(ctx context.Context) (err error) {
				fence, err = s.Access.Fence(ctx)
				return err
			},
		)
		if err != nil {
			return err
		}
		if len(reviewable.Allow) == 0 {
			return errs.New(errs.Denied, "serving needs dreamer.review effective access (D7, D14)",
				"this key holds dreamer.review on no workarea")
		}
		if workarea != "" {
			w, err := s.Access.Workarea(ctx, workarea)
			if err != nil {
				return err
			}
			if reviewable = reviewable.Within(w.IDPath); reviewable.Empty() {
				return errs.New(errs.Denied, "serving needs dreamer.review effective access (D7, D14)",
					"this key holds dreamer.review nowhere in workarea %s", w.ID)
			}
		}
		now := s.now()
		skip := slices.Clone(pass)
		// lease takes c's lease and, on success, answers the serve.
		lease := func(c domain.Claim, srv domain.Serve, wait bool) (bool, error) {
			if err := s.Repo.ServeInsert(ctx, caller.TenantID, srv, wait); errors.Is(err, ErrConflict) {
				return false, nil
			} else if err != nil {
				return false, fmt.Errorf("lease item: %w", err)
			}
			parents, err := s.Lineage.Parents(ctx, caller.TenantID, c.ID)
			if err != nil {
				return false, fmt.Errorf("load lineage: %w", err)
			}
			out, found = Served{Serve: srv, Claim: c, Parents: parents}, true
			return true, s.record(ctx, caller.TenantID, journal.Event{
				Type: "review.serve", Actor: caller.KeyID, Workarea: c.WorkareaID, Subject: subject(c),
				Payload: map[string]any{"serve_id": srv.ID, "expires_at": srv.ExpiresAt, "self_signed": srv.SelfSigned},
			})
		}
		// Leases pass over rows other transactions have locked (most
		// often concurrent serves of the same oldest items), so reviewers
		// do not queue behind each other; if that leaves nothing, the
		// items passed over are tried again, waiting for their locks.
		type passed struct {
			c   domain.Claim
			srv domain.Serve
		}
		var contested []passed
		for range candidateBatches {
			batch, err := s.Repo.QueueCandidates(ctx, caller.TenantID, QueueFilter{
				Within: reviewable, Principal: caller.PrincipalID, Fence: fence, Skip: skip, Now: now, Limit: candidateBatch,
			})
			if err != nil {
				return fmt.Errorf("review queue: %w", err)
			}
			verdicts, err := s.judge(ctx, domain.Reviewer{KeyID: caller.KeyID, Principal: caller.PrincipalID}, batch, now)
			if err != nil {
				return err
			}
			for i, c := range batch {
				srv, err := verdicts[i].srv, verdicts[i].err
				if errs.Is(err, errs.ClosureBound) {
					bounded, unreviewable = err, append(unreviewable, c)
				} else if err != nil && !refusal(err) {
					return err
				}
				if err != nil {
					skip = append(skip, c.ID)
					continue
				}
				if ok, err := lease(c, srv, false); ok || err != nil {
					return err
				}
				skip = append(skip, c.ID) // another reviewer won it, or holds its row now
				contested = append(contested, passed{c, srv})
			}
			if len(batch) < candidateBatch {
				break
			}
		}
		for _, p := range contested {
			if ok, err := lease(p.c, p.srv, true); ok || err != nil {
				return err
			}
		}
		// No claim to review: a pending edge, ratified by a reviewer on
		// both endpoints who is not its proposer (R2).
		e, ok, err := s.Lineage.NextEdge(ctx, caller.TenantID, caller.PrincipalID, reviewable, pass, now, now.Add(s.cfg.ServeTTL))
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		srv := domain.Serve{
			ID: ids.New(ids.Serve), EdgeID: e.ID, Reviewer: domain.Reviewer{KeyID: caller.KeyID, Principal: caller.PrincipalID},
			ServedAt: now, ExpiresAt: now.Add(s.cfg.ServeTTL),
		}
		if err := s.Repo.ServeInsert(ctx, caller.TenantID, srv, true); err != nil {
			return fmt.Errorf("lease edge: %w", err)
		}
		out, found = Served{Serve: srv, Edge: &e}, true
		return s.record(ctx, caller.TenantID, journal.Event{
			Type: "review.serve", Actor: caller.KeyID, Subject: map[string]any{"edge_id": e.ID},
			Payload: map[string]any{"serve_id": srv.ID, "expires_at": srv.ExpiresAt},
		})
	})
	if err != nil {
		return Served{}, false, err
	}
	for _, c := range unreviewable {
		// A failure here leaves the item held for the next serve to try.
		if xerr := s.expireUnreviewable(ctx, c); xerr != nil && !found {
			return Served{}, false, xerr
		}
	}
	if !found && bounded != nil {
		return Served{}, false, bounded
	}
	if found && out.Edge == nil && len(out.Claim.Attachments) > 0 {
		out.Material = s.reviewMaterial(ctx, out.Claim)
	}
	return out, found, nil
}

// expireUnreviewable expires a held item whose lineage closure is over the
// bound, in its own unit of work: nobody may review it (R2 fails closed),
// and its author sees it expired in oml_my_work.
func (s *Service) expireUnreviewable(ctx context.Context, c domain.Claim) error {
	return s.Tx.InTx(ctx, func(ctx context.Context) error {
		cur, err := s.Repo.ClaimGetForUpdate(ctx, c.TenantID, c.ID)
		if err != nil {
			return fmt.Errorf("lock claim: %w", err)
		}
		if cur.State != domain.StateHeld {
			return nil // a verdict or another serve settled it first
		}
		now := s.now()
		cur.State, cur.SettledAt, cur.LeasedUntil = domain.StateExpired, &now, nil
		if err := s.Repo.ClaimUpdate(ctx, cur); err != nil {
			return fmt.Errorf("expire claim: %w", err)
		}
		if err := s.Index.Withdrawn(ctx, cur.TenantID, cur.ID); err != nil {
			return fmt.Errorf("drop staged claim: %w", err)
		}
		return s.record(ctx, cur.TenantID, journal.Event{
			Type: "lifecycle.expire", Actor: "system:review", Workarea: cur.WorkareaID, Subject: subject(cur),
			Payload: map[string]any{"reason": "closure_bound", "closure_max": s.cfg.ClosureMax},
		})
	})
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

// judged is one candidate as the serve judged it: a serve to lease, or
// the typed refusal that makes it ineligible for this reviewer.
type judged struct {
	srv domain.Serve
	err error
}

// judge decides, for a batch of held claims, which the reviewer may be
// served now: the checks the queue query cannot make (the workarea's
// status and policy, the tenant's review settings, independence over each
// whole lineage closure). A batch costs the same five reads however many
// claims and workareas it holds — the tenant's settings, the workareas,
// their policies, every closure (one recursive query while no closure is
// over the bound) and the closures' authors — and the domain decides each
// claim (domain.Admissible). An error is a failure; a refusal is in the
// claim's judged.err.
func (s *Service) judge(ctx context.Context, r domain.Reviewer, batch []domain.Claim, now time.Time) ([]judged, error) {
	out := make([]judged, len(batch))
	if len(batch) == 0 {
		return out, nil
	}
	tenant := batch[0].TenantID
	claimIDs := make([]string, len(batch))
	var workareaIDs, paths []string
	for i, c := range batch {
		claimIDs[i] = c.ID
		if !slices.Contains(workareaIDs, c.WorkareaID) {
			workareaIDs = append(workareaIDs, c.WorkareaID)
		}
		if !slices.Contains(paths, c.WorkareaIDPath) {
			paths = append(paths, c.WorkareaIDPath)
		}
	}
	// The workareas, their policies and the closures do not depend on
	// each other: one round trip.
	var workareas map[string]Workarea
	var policies map[string]domain.Policy
	var closures map[string][]string
	var bounded map[string]error
	err := s.Reads.Together(ctx,
		func(ctx context.Context) (err error) {
			workareas, err = s.Access.WorkareasByIDs(ctx, workareaIDs)
			return err
		},
		func(ctx context.Context) (err error) {
			if policies, err = s.Repo.PoliciesAt(ctx, tenant, paths); err != nil {
				return fmt.Errorf("load review policies and settings: %w", err)
			}
			return nil
		},
		func(ctx context.Context) (err error) {
			if closures, bounded, err = s.Lineage.Closures(ctx, tenant, claimIDs, s.cfg.ClosureMax); err != nil {
				return fmt.Errorf("lineage closures: %w", err)
			}
			return nil
		},
	)
	if err != nil {
		return nil, err
	}
	var members []string
	for _, ms := range closures {
		members = append(members, ms...)
	}
	authors, err := s.Repo.Authors(ctx, tenant, members)
	if err != nil {
		return nil, fmt.Errorf("load lineage authors: %w", err)
	}
	for i, c := range batch {
		w, visible := workareas[c.WorkareaID]
		if !visible {
			out[i].err = errs.New(errs.NotFound, "effective access (D7); unknown and out-of-scope are indistinguishable",
				"no workarea %s for this key", c.WorkareaID)
			continue
		}
		if err := bounded[c.ID]; err != nil {
			out[i].err = err
			continue
		}
		closure := closures[c.ID]
		by := make([]string, 0, len(closure))
		for _, m := range closure {
			a, ok := authors[m]
			if !ok {
				// A closure member admission does not know (an edge to a
				// claim that is gone) has no author to compare: fail closed.
				out[i].err = errs.New(errs.NotIndependent, "R2: independence is checked over every claim in the lineage closure (fail closed)",
					"artifact %s has lineage member %s whose author cannot be established", c.ID, m)
				break
			}
			by = append(by, a)
		}
		if out[i].err != nil {
			continue
		}
		p, ok := policies[c.WorkareaIDPath]
		if !ok {
			return nil, fmt.Errorf("load review policies: none for %s", c.WorkareaIDPath)
		}
		self, err := domain.Admissible(c, r, w.Status, by, p)
		if err != nil {
			out[i].err = err
			continue
		}
		out[i].srv = domain.Serve{
			ID: ids.New(ids.Serve), ArtifactID: c.ID, Reviewer: r, SelfSigned: self,
			ServedAt: now, ExpiresAt: now.Add(s.cfg.ServeTTL), Closure: closure,
		}
	}
	return out, nil
}

// refusal reports whether err is a typed refusal (an ineligible item),
// not a failure.
func refusal(err error) bool {
	e := errs.From(err)
	return e != nil && e.Code != errs.Internal
}

// Decision is the outcome of a verdict: on a claim, or on an edge.
type Decision struct {
	Claim   domain.Claim
	Edge    *Edge
	Verdict domain.Verdict
}

// Verdict records the calling reviewer's verdict on its serve. The first
// verdict consumes the serve; a second is review.serve_consumed, a late one
// review.serve_expired; a serve of another key is access.not_found. What
// the serve checked is checked again, in the verdict's unit of work, since
// it may have changed since (see [Service.recheck]). The last required
// approval promotes the claim and tells the serving tier in the same unit
// of work.
func (s *Service) Verdict(ctx context.Context, serveID, verdict, reason string) (Decision, error) {
	caller, err := auth.ContentCaller(ctx, "reviews")
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
		now := s.now()
		// The serve (locked) and the caller's grants: one round trip.
		var srv domain.Serve
		var reviewable Subtrees
		err := s.Reads.Together(ctx,
			func(ctx context.Context) (err error) {
				srv, err = s.consumeOwnServe(ctx, caller, serveID, now)
				return err
			},
			func(ctx context.Context) (err error) {
				reviewable, err = s.Access.Subtrees(ctx, scope.DreamerReview)
				return err
			},
		)
		if err != nil {
			return err
		}
		if srv.EdgeID != "" {
			if err := s.Repo.ServeDecide(ctx, caller.TenantID, srv, v, reason); err != nil {
				return fmt.Errorf("record verdict: %w", err)
			}
			e, err := s.Lineage.DecideEdge(ctx, caller.TenantID, srv.EdgeID, v == domain.Approve, caller.KeyID, reviewable)
			out = Decision{Edge: &e, Verdict: v}
			return err
		}
		c, err := s.Repo.ClaimGetForUpdate(ctx, caller.TenantID, srv.ArtifactID)
		if err != nil {
			return fmt.Errorf("lock claim: %w", err)
		}
		// One identity counts once, whichever of its keys was served: a
		// lease that lapsed and was taken again must not let a principal
		// approve an item twice.
		if judged, err := s.Repo.ServeJudgedBy(ctx, caller.TenantID, c.ID, caller.PrincipalID); err != nil {
			return fmt.Errorf("check earlier verdicts: %w", err)
		} else if judged {
			return errs.New(errs.NotIndependent, "R2: one identity's verdict counts once per item",
				"principal %s already gave item %s a verdict", caller.Principal, c.ID)
		}
		if c.State == domain.StateHeld && !c.Expired(now) {
			if err := s.recheck(ctx, reviewable, &srv, c); err != nil {
				return err
			}
		}
		if err := c.Decide(v, srv.SelfSigned, now); err != nil {
			return err
		}
		if c.State == domain.StatePromoted && c.Kind.Versioned() {
			// The page may have moved on since this version was written:
			// the approval that would promote it is refused, and the
			// reviewer rejects it instead.
			if err := s.Repo.ClaimKeyLock(ctx, c.TenantID, c.WorkareaID, "", c.ClaimKey); err != nil {
				return fmt.Errorf("lock page versions: %w", err)
			}
			if err := s.checkBase(ctx, c); err != nil {
				return err
			}
		}
		if err := s.Repo.ServeDecide(ctx, caller.TenantID, srv, v, reason); err != nil {
			return fmt.Errorf("record verdict: %w", err)
		}
		if err := s.Repo.ClaimUpdate(ctx, c); err != nil {
			return fmt.Errorf("update claim: %w", err)
		}
		switch c.State {
		case domain.StatePromoted:
			if err := s.serveNewest(ctx, c); err != nil {
				return err
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

// consumeOwnServe locks the caller's serve and consumes it at now: an
// unknown serve and another key's answer alike (D14); a consumed or
// expired one is refused.
func (s *Service) consumeOwnServe(ctx context.Context, caller auth.Caller, serveID string, now time.Time) (domain.Serve, error) {
	srv, err := s.Repo.ServeGetForUpdate(ctx, caller.TenantID, serveID)
	if errors.Is(err, ErrNotFound) || (err == nil && srv.Reviewer.KeyID != caller.KeyID) {
		return domain.Serve{}, errs.New(errs.NotFound, "a serve_id is the served key's alone (D14); unknown and foreign serves are indistinguishable",
			"no serve with that id for this key")
	}
	if err != nil {
		return domain.Serve{}, fmt.Errorf("load serve: %w", err)
	}
	return srv, srv.Consume(now)
}

// serveNewest tells the serving tier about a promotion so that recall
// holds one version of a claim, the newest promoted one: a newer version
// (one that supersedes this) takes the older ones' place in the same unit
// of work, and an older version promoted after a newer one stays out of
// recall. The graph still shows the whole chain.
func (s *Service) serveNewest(ctx context.Context, c domain.Claim) error {
	if err := s.Repo.ClaimKeyLock(ctx, c.TenantID, c.WorkareaID, c.SimulationID, c.ClaimKey); err != nil {
		return fmt.Errorf("lock claim versions: %w", err)
	}
	versions, err := s.Repo.PromotedVersions(ctx, c.TenantID, c.WorkareaID, c.SimulationID, c.ClaimKey)
	if err != nil {
		return fmt.Errorf("list promoted versions: %w", err)
	}
	newest := domain.NewestVersion(c, versions)
	if newest.ID == c.ID && c.Tombstone() {
		// A page's deletion takes every version of the page out of recall.
		for _, v := range versions {
			if err := s.Index.Withdrawn(ctx, c.TenantID, v.ID); err != nil {
				return fmt.Errorf("withdraw deleted page: %w", err)
			}
		}
		return nil
	}
	if newest.ID != c.ID {
		if err := s.Index.Withdrawn(ctx, c.TenantID, c.ID); err != nil {
			return fmt.Errorf("drop superseded version: %w", err)
		}
		return nil
	}
	indexed := c
	indexed.Text = indexedText(c.Text)
	if err := s.Index.Promoted(ctx, indexed); err != nil {
		return fmt.Errorf("index promoted claim: %w", err)
	}
	for _, v := range versions {
		if v.ID == c.ID {
			continue
		}
		if err := s.Index.Withdrawn(ctx, c.TenantID, v.ID); err != nil {
			return fmt.Errorf("withdraw superseded version: %w", err)
		}
	}
	return nil
}

// recheck repeats, at the verdict, what the serve decided, since grants,
// edges, the workarea's status and the tenant's settings may have changed
// since (seed 000: the closure is computed at promotion time). The
// reviewer must still hold dreamer.review on the claim's workarea, the
// workarea must not be validated, and the reviewer must be independent of
// the claim's closure as it is now; srv takes the closure and self-signed
// mark found, which the verdict records.
func (s *Service) recheck(ctx context.Context, reviewable Subtrees, srv *domain.Serve, c domain.Claim) error {
	denied := errs.New(errs.Denied, "a verdict needs dreamer.review effective access on the item's workarea when it is given (D7, D14)",
		"this key no longer holds dreamer.review on workarea %s", c.WorkareaID)
	if !reviewable.Contains(c.WorkareaIDPath) {
		return denied
	}
	j, err := s.judge(ctx, srv.Reviewer, []domain.Claim{c}, s.now())
	if err != nil {
		return err
	}
	if errs.Is(j[0].err, errs.NotFound) {
		return denied
	}
	if j[0].err != nil {
		return j[0].err
	}
	srv.SelfSigned, srv.Closure = j[0].srv.SelfSigned, j[0].srv.Closure
	return nil
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
