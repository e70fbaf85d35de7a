package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
	"github.com/omlhub/oml/platform/textsafe"
)

// Receipt is what a submission returns: accepted for review, never
// published.
type Receipt struct {
	Claim            domain.Claim
	AttachmentsBound int
	LineageDeclared  int
}

// ResolveWorkarea returns the id of the workarea ref names for the caller
// (idempotency records are scoped by it).
func (s *Service) ResolveWorkarea(ctx context.Context, ref string) (string, error) {
	w, err := s.Access.Workarea(ctx, ref)
	return w.ID, err
}

// Submit runs the admission pipeline for one submission: [Service.Prepare]
// then [Service.Commit] in one unit of work.
func (s *Service) Submit(ctx context.Context, sub domain.Submission) (Receipt, error) {
	p, err := s.Prepare(ctx, sub)
	if err != nil {
		return Receipt{}, err
	}
	return s.Commit(ctx, p)
}

// PreparedSubmission is a validated submission with its text prepared
// for the serving tier, ready for [Service.Commit].
type PreparedSubmission struct {
	caller auth.Caller
	sub    domain.Submission
	index  Prepared
}

// Prepare validates a submission and prepares its text for the serving
// tier, which may call an embedding service: it runs before, never inside,
// the unit of work that commits the submission (and its idempotency
// record).
func (s *Service) Prepare(ctx context.Context, sub domain.Submission) (PreparedSubmission, error) {
	caller, err := auth.ContentCaller(ctx, "submissions")
	if err != nil {
		return PreparedSubmission{}, err
	}
	kind, err := domain.ParseKind(string(sub.Kind))
	if err != nil {
		return PreparedSubmission{}, err
	}
	sub.Kind = kind
	if err := sub.Validate(s.cfg.MaxTextBytes); err != nil {
		return PreparedSubmission{}, err
	}
	prep, err := s.Index.Prepare(ctx, sub.Text)
	if err != nil {
		return PreparedSubmission{}, err
	}
	return PreparedSubmission{caller: caller, sub: sub, index: prep}, nil
}

// PreparePage is Prepare for a knowledge-base page version (the knowledge
// context's port) or, with kind document, a document's: kind page, the page's path as its claim key, its text
// at most domain.MaxPageBytes, empty for a deletion's tombstone (which
// nothing indexes). Recall indexes a page's first
// domain.DefaultTextSize bytes.
func (s *Service) PreparePage(ctx context.Context, sub domain.Submission) (PreparedSubmission, error) {
	caller, err := auth.ContentCaller(ctx, "submissions")
	if err != nil {
		return PreparedSubmission{}, err
	}
	if !sub.Kind.Versioned() {
		sub.Kind = domain.KindPage
	}
	sub.Verb = domain.VerbRemember
	if err := sub.Validate(s.cfg.MaxTextBytes); err != nil {
		return PreparedSubmission{}, err
	}
	var prep Prepared
	if sub.Text != "" {
		if prep, err = s.Index.Prepare(ctx, indexedText(sub.Text)); err != nil {
			return PreparedSubmission{}, err
		}
	}
	return PreparedSubmission{caller: caller, sub: sub, index: prep}, nil
}

// indexedText is what recall indexes of a text: a page's first
// domain.DefaultTextSize bytes (a tsvector is bounded; a claim never
// exceeds it).
func indexedText(text string) string {
	if len(text) <= domain.DefaultTextSize {
		return text
	}
	return textsafe.Clip(text, domain.DefaultTextSize-len("…"))
}

// Commit runs the rest of the pipeline in the caller's unit of work (it
// opens one when ctx carries none): check the target and the caller's
// access, the lineage targets (readable, simulation fence), bind uploads,
// scan, seal the envelope, insert the claim held, declare its lineage,
// journal it.
func (s *Service) Commit(ctx context.Context, p PreparedSubmission) (Receipt, error) {
	var out Receipt
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		var err error
		out, err = s.submit(ctx, p.caller, p.sub, p.index)
		return err
	})
	return out, err
}

func (s *Service) submit(ctx context.Context, caller auth.Caller, sub domain.Submission, prep Prepared) (Receipt, error) {
	// The target first: its lookup reads the caller's access (ban
	// included) in the same statement. A ban still answers before
	// anything wrong with the target.
	w, werr := s.writableWorkarea(ctx, sub.Workarea)
	if werr != nil && !refusal(werr) {
		return Receipt{}, werr // the read itself failed: no ban can be read after it
	}
	banned, reason, err := s.Access.Banned(ctx)
	if err != nil {
		return Receipt{}, err
	}
	if banned {
		return Receipt{}, errs.New(errs.Banned, "a banned author's submissions are refused at admission",
			"this key's principal is banned: %s", reason)
	}
	if werr != nil {
		return Receipt{}, werr
	}
	now := s.now()
	c := domain.Claim{
		ID: ids.New(ids.Artifact), TenantID: caller.TenantID, WorkareaID: w.ID, WorkareaIDPath: w.IDPath,
		ClaimKey: sub.ClaimKey, Version: 1, Kind: sub.Kind, Verb: sub.Verb, State: domain.StateHeld,
		Text: sub.Text, AuthorKeyID: caller.KeyID, AuthorPrincipal: caller.PrincipalID,
		SimulationID: sub.SimulationID, DerivesFrom: sub.DerivesFrom, SubmittedAt: now, BaseVersion: sub.BaseVersion,
	}
	if c.Kind.Versioned() {
		c.PageVersion = domain.PageVersion(c.Text)
	}
	if err := s.placeVersion(ctx, &c, sub); err != nil {
		return Receipt{}, err
	}
	if err := s.checkLineage(ctx, c, w); err != nil {
		return Receipt{}, err
	}
	if len(sub.Uploads) > 0 {
		if c.Attachments, err = s.Uploads.Bind(ctx, caller.TenantID, caller.KeyID, c.ID, sub.Uploads); err != nil {
			return Receipt{}, err
		}
	}
	policy, err := s.Repo.PolicyAt(ctx, caller.TenantID, w.IDPath)
	if err != nil {
		return Receipt{}, fmt.Errorf("load review policy: %w", err)
	}
	c.Findings = domain.Scan(c.Text)
	if len(c.Findings) > 0 && policy.Scan == domain.ScanBlock {
		return Receipt{}, scanBlocked(c.Findings)
	}
	c.RequiredApprovals = policy.RequiredApprovals
	c.HeldExpiresAt = now.Add(policy.HeldTTL)

	body, sig, err := s.sealEnvelope(c)
	if err != nil {
		return Receipt{}, fmt.Errorf("seal envelope: %w", err)
	}
	c.Envelope, c.Signature = body, sig
	if err := s.Repo.ClaimInsert(ctx, c, body, sig); err != nil {
		if errors.Is(err, ErrConflict) && c.Supersedes != "" {
			return Receipt{}, successorExists(c)
		}
		if errors.Is(err, ErrConflict) {
			return Receipt{}, claimKeyConflict(c)
		}
		return Receipt{}, fmt.Errorf("insert claim: %w", err)
	}
	if len(c.DerivesFrom) > 0 {
		if err := s.Lineage.Declare(ctx, caller.TenantID, c.ID, c.DerivesFrom, now); err != nil {
			return Receipt{}, fmt.Errorf("declare lineage: %w", err)
		}
	}
	if err := s.stage(ctx, c, prep); err != nil {
		return Receipt{}, fmt.Errorf("stage for recall: %w", err)
	}
	// The journal writes the event as the unit of work commits (chained
	// in place when no one holds the tenant's head, else right after).
	err = s.record(ctx, caller.TenantID, journal.Event{
		Type: "submission." + string(c.Verb), Actor: caller.KeyID, Workarea: c.WorkareaID, Subject: subject(c),
		Payload: map[string]any{
			"kind": c.Kind, "derives_from": c.DerivesFrom, "supersedes": c.Supersedes, "attachments": len(c.Attachments),
			"findings": len(c.Findings), "held_expires_at": c.HeldExpiresAt, "envelope_sha256": sha256Hex(body),
			"page_version": c.PageVersion, "base_version": c.BaseVersion,
		},
	})
	return Receipt{Claim: c, AttachmentsBound: len(c.Attachments), LineageDeclared: len(c.DerivesFrom)}, err
}

// writableWorkarea resolves the target and applies the write rules: the
// caller must see it, it must not be frozen or universe itself, and the
// caller must hold writer there.
func (s *Service) writableWorkarea(ctx context.Context, ref string) (Workarea, error) {
	w, err := s.Access.Workarea(ctx, ref)
	if err != nil {
		return w, err
	}
	switch {
	case w.Status == "validated":
		return w, errs.New(errs.Frozen, "status ladder: a validated workarea refuses new writes (D8)",
			"workarea %s is validated; writes are refused. Demote, erasure and crew-metadata update are its only admissible mutations, none on this surface.", w.ID)
	case w.Root:
		return w, errs.New(errs.Frozen, "universe is the tenant's root: write into a workarea below it (D8)",
			"workarea %s is universe; submissions go into a workarea below it", w.ID)
	case !w.Writer:
		return w, errs.New(errs.Denied, "writing needs writer effective access on the node (D7)",
			"this key has no writer access on workarea %s", w.ID)
	}
	return w, nil
}

func (s *Service) stage(ctx context.Context, c domain.Claim, prep Prepared) error {
	if c.Tombstone() {
		return nil
	}
	return s.Index.Stage(ctx, c.TenantID, c.ID, prep)
}

// placeVersion sets the claim's key and version: a new claim takes a free
// key; a supersession continues the caller's own claim; a page version
// continues its page, whoever wrote the versions before it.
func (s *Service) placeVersion(ctx context.Context, c *domain.Claim, sub domain.Submission) error {
	if c.Kind.Versioned() {
		return s.placePageVersion(ctx, c)
	}
	if sub.Supersedes == "" {
		_, err := s.Repo.ClaimKeyHolder(ctx, c.TenantID, c.WorkareaID, c.SimulationID, c.ClaimKey)
		if err == nil {
			return claimKeyConflict(*c)
		}
		if !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("look up claim key: %w", err)
		}
		return nil
	}
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return err
	}
	prev, err := s.Repo.ClaimGet(ctx, c.TenantID, sub.Supersedes)
	// A page's or document's versions are continued by their own context,
	// never by supersedes: they answer as no claim of the caller's.
	if errors.Is(err, ErrNotFound) || (err == nil && (prev.AuthorPrincipal != c.AuthorPrincipal || prev.State == domain.StateErased ||
		!fence.Admits(prev.SimulationID) || prev.Kind.Versioned())) {
		return errs.New(errs.NotFound, "supersedes names one of the caller's own claims (fail closed)",
			"supersedes names no claim of this key's principal")
	}
	if err != nil {
		return fmt.Errorf("load superseded claim: %w", err)
	}
	if prev.SimulationID != c.SimulationID {
		// A claim's versions share its simulation or lack of one: a version
		// outside the simulation would carry a fenced claim to everyone,
		// one inside it would take the claim from recall outside it.
		return errs.New(errs.SimulationFence, "a claim's versions share its simulation_id (D10)",
			"supersedes names a claim of simulation %q; a new version carries simulation_id %q", prev.SimulationID, prev.SimulationID)
	}
	if prev.WorkareaID != c.WorkareaID {
		return errs.Invalid("supersedes: the new version goes into the claim's workarea %s", prev.WorkareaID)
	}
	if sub.ClaimKey != "" && sub.ClaimKey != prev.ClaimKey {
		return errs.Invalid("supersedes: claim_key is %q, not %q", prev.ClaimKey, sub.ClaimKey)
	}
	// Versions of one claim are written one at a time, and only on top of
	// its newest held or promoted version: a claim never forks, not even
	// through a rejected intermediate.
	if err := s.Repo.ClaimKeyLock(ctx, c.TenantID, c.WorkareaID, prev.SimulationID, prev.ClaimKey); err != nil {
		return fmt.Errorf("lock claim versions: %w", err)
	}
	head, err := s.Repo.ClaimKeyHead(ctx, c.TenantID, c.WorkareaID, prev.SimulationID, prev.ClaimKey)
	switch {
	case err == nil && head.ID != prev.ID:
		return errs.New(errs.SuccessorExists, "a version has at most one successor (held or promoted); supersede the newest version",
			"artifact %s is not the newest version of claim %q: supersede %s (version %d)", prev.ID, prev.ClaimKey, head.ID, head.Version)
	case err != nil && !errors.Is(err, ErrNotFound):
		return fmt.Errorf("look up newest version: %w", err)
	}
	latest, err := s.Repo.ClaimKeyHolder(ctx, c.TenantID, c.WorkareaID, prev.SimulationID, prev.ClaimKey)
	if err != nil {
		return fmt.Errorf("look up latest version: %w", err)
	}
	c.ClaimKey, c.Version, c.Supersedes = prev.ClaimKey, latest.Version+1, prev.ID
	return nil
}

// placePageVersion numbers a page version after every earlier one (under
// the page's lock, so two writers never share a number) and checks its
// base version against the promoted head: several versions may wait for
// review at once, and whichever is promoted first wins; a version written
// against an older head is refused at promotion (checkBase again).
func (s *Service) placePageVersion(ctx context.Context, c *domain.Claim) error {
	if err := s.Repo.ClaimKeyLock(ctx, c.TenantID, c.WorkareaID, "", c.ClaimKey); err != nil {
		return fmt.Errorf("lock page versions: %w", err)
	}
	latest, err := s.Repo.ClaimKeyHolder(ctx, c.TenantID, c.WorkareaID, "", c.ClaimKey)
	switch {
	case err == nil && latest.Kind != c.Kind:
		return claimKeyConflict(*c) // unreachable: claim keys never start with '/'
	case err == nil:
		c.Version = latest.Version + 1
	case !errors.Is(err, ErrNotFound):
		return fmt.Errorf("look up page versions: %w", err)
	}
	return s.checkBase(ctx, *c)
}

// checkBase compares a page version's base version with the page's
// promoted head (a tombstone or no head at all is absent), with the page's
// versions locked by the caller. A version written before the promoted
// head (a lower number) never replaces it: promoting it would change
// nothing, so it is refused as stale too.
func (s *Service) checkBase(ctx context.Context, c domain.Claim) error {
	head, err := s.Repo.PageHead(ctx, c.TenantID, c.WorkareaID, c.ClaimKey)
	current := domain.Absent
	switch {
	case err == nil && !head.Tombstone():
		current = head.PageVersion
	case err != nil && !errors.Is(err, ErrNotFound):
		return fmt.Errorf("read page head: %w", err)
	}
	if err == nil && head.Version > c.Version {
		return errs.New(errs.PageConflict, "a page or document version written before its promoted head is stale (the version written last wins)",
			"%s has a newer promoted version than this one: current_version=%s", c.ClaimKey, current)
	}
	if c.BaseVersion != "" && current != c.BaseVersion {
		return domain.PageConflict(c.ClaimKey, c.BaseVersion, current)
	}
	return nil
}

// checkLineage: a submission carrying a simulation_id needs a live
// simulation whose audience holds the key, with the target workarea in its
// subtree; every derives_from target must be readable by the caller (else
// access.not_found, fail closed: a fenced simulation row is unknown), and
// deriving from a simulation row requires that simulation's id (D10).
func (s *Service) checkLineage(ctx context.Context, c domain.Claim, target Workarea) error {
	if c.SimulationID != "" {
		root, err := s.Access.Simulation(ctx, c.SimulationID)
		if err != nil {
			return err
		}
		if !(scope.Subtrees{Allow: []string{root}}).Contains(target.IDPath) {
			return errs.New(errs.SimulationFence, "a simulation's rows live in its workarea's subtree (D10)",
				"workarea %s is outside simulation %s's subtree", c.WorkareaID, c.SimulationID)
		}
	}
	if len(c.DerivesFrom) == 0 {
		return nil
	}
	readable, err := s.Access.Subtrees(ctx, scope.Reader)
	if err != nil {
		return err
	}
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return err
	}
	targets, err := s.Repo.ClaimsByIDs(ctx, c.TenantID, c.DerivesFrom)
	if err != nil {
		return fmt.Errorf("load lineage targets: %w", err)
	}
	byID := make(map[string]domain.Claim, len(targets))
	for _, t := range targets {
		byID[t.ID] = t
	}
	for i, id := range c.DerivesFrom {
		t, ok := byID[id]
		if !ok || !fence.Admits(t.SimulationID) || !t.VisibleTo(c.AuthorPrincipal) || !readable.Contains(t.WorkareaIDPath) {
			return errs.New(errs.NotFound, "lineage targets must be readable by the submitting key (fail closed)",
				"derives_from[%d] names no artifact readable by this key", i)
		}
		if t.SimulationID != "" && t.SimulationID != c.SimulationID {
			return errs.New(errs.SimulationFence, "a submission deriving from a simulation row carries its simulation_id (D10)",
				"derives_from[%d] is a row of simulation %s; carry simulation_id %s", i, t.SimulationID, t.SimulationID)
		}
	}
	return nil
}

func claimKeyConflict(c domain.Claim) error {
	return errs.New(errs.ClaimKeyConflict, "claim_key is unique per workarea over non-erased claims; a new version uses supersedes",
		"claim_key %q is taken in workarea %s", c.ClaimKey, c.WorkareaID)
}

// successorExists refuses a second successor of one version (the
// version-number index clashes the same way when two supersessions race).
func successorExists(c domain.Claim) error {
	return errs.New(errs.SuccessorExists, "a version has at most one successor (held or promoted); supersede the newest version",
		"artifact %s already has a newer version, held or promoted, or one is being written now", c.Supersedes)
}

func scanBlocked(f []domain.Finding) error {
	rules := make([]string, 0, len(f))
	for _, x := range f {
		rules = append(rules, x.Rule)
	}
	return errs.New(errs.ScanBlocked, "the workarea's review policy blocks submissions with scan findings",
		"the text has %d finding(s): %s", len(f), strings.Join(rules, ", "))
}
