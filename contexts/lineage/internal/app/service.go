package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omlhub/oml/contexts/lineage/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// Deps are the service's ports.
type Deps struct {
	Repo    Repository
	Access  Access
	Claims  Claims
	Reads   Reads
	Journal Journal
	Tx      Transactor
	Now     func() time.Time
}

// Service is the lineage context's application service.
type Service struct{ Deps }

// New returns a service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{d}
}

func (s *Service) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// Propose records a pending edge (oml_relate_propose). A workarea edge
// needs reader on both endpoints and dreamer.propose on at least one; a
// claim edge needs both claims readable and dreamer.propose on at least
// one's workarea. Endpoints the caller cannot read are access.not_found,
// like unknown ones.
func (s *Service) Propose(ctx context.Context, p domain.Proposal) (domain.Edge, error) {
	c, err := auth.ContentCaller(ctx, "edge proposals")
	if err != nil {
		return domain.Edge{}, err
	}
	if err := p.Validate(); err != nil {
		return domain.Edge{}, err
	}
	e := domain.Edge{
		ID: ids.New(ids.WorkareaEdge), TenantID: c.TenantID, Kind: p.Kind, Label: p.Label, Note: p.Note,
		State: domain.Pending, ProposerKeyID: c.KeyID, ProposerPrincipal: c.PrincipalID, ProposedAt: s.now(),
	}
	if p.Kind == domain.KindWorkarea {
		err = s.workareaEndpoints(ctx, &e, p)
	} else {
		e.ID = ids.New(ids.ClaimEdge)
		err = s.claimEndpoints(ctx, &e, p)
	}
	if err != nil {
		return domain.Edge{}, err
	}
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.Repo.EdgeInsert(ctx, e); err != nil {
			if errors.Is(err, ErrConflict) {
				return errs.New(errs.EdgeExists, "one live proposal per (from, to, label)", "an edge %s → %s labelled %q is already pending or ratified", e.From, e.To, e.Label)
			}
			return fmt.Errorf("insert edge: %w", err)
		}
		from, _ := e.Workareas()
		_, err := s.Journal.Append(ctx, c.TenantID, journal.Event{
			Type: string(e.Kind) + ".relate_proposed", Actor: c.KeyID, Workarea: from,
			Subject: map[string]any{"edge_id": e.ID},
			Payload: map[string]any{"label": e.Label, "from": e.From, "to": e.To, "note": e.Note},
		})
		return err
	})
	return e, err
}

const ruleEdge = "edge proposal requires dreamer(propose) on ≥1 endpoint and reader on both (D7)"

func endpointNotFound(which string) error {
	return errs.New(errs.NotFound, ruleEdge, "endpoint '%s' names no workarea readable by this key", which)
}

func (s *Service) workareaEndpoints(ctx context.Context, e *domain.Edge, p domain.Proposal) error {
	from, err := s.Access.Workarea(ctx, p.From)
	if err != nil || !from.Reader {
		return endpointNotFound("from")
	}
	to, err := s.Access.Workarea(ctx, p.To)
	if err != nil || !to.Reader {
		return endpointNotFound("to")
	}
	if from.ID == to.ID {
		return errs.Invalid("an edge joins two different workareas")
	}
	if !from.Propose && !to.Propose {
		return errs.New(errs.Denied, ruleEdge, "this key holds dreamer.propose on neither endpoint")
	}
	for _, w := range []Workarea{from, to} {
		if w.Status == "validated" {
			return errs.New(errs.Frozen, "status ladder: a validated workarea refuses new writes (D8)", "workarea %s is validated", w.ID)
		}
	}
	e.From, e.To, e.FromIDPath, e.ToIDPath = from.ID, to.ID, from.IDPath, to.IDPath
	return nil
}

func (s *Service) claimEndpoints(ctx context.Context, e *domain.Edge, p domain.Proposal) error {
	refs, err := s.Claims.Lookup(ctx, []string{p.From, p.To})
	if err != nil {
		return err
	}
	from, to := refs[p.From], refs[p.To]
	for which, r := range map[string]ClaimRef{"from": from, "to": to} {
		if r.Visibility != Readable {
			return errs.New(errs.NotFound, "claim edges join claims readable by the proposing key (fail closed)",
				"endpoint '%s' names no artifact readable by this key", which)
		}
		if r.SimulationID != "" {
			// An edge's review and its readers are not fenced (the edge
			// queue and the graph's edges carry no simulation): refuse
			// rather than let one reveal a simulation row (D10, fail closed).
			return errs.New(errs.SimulationFence, "claim edges do not touch simulation rows: their review and readers are not fenced (D10, fail closed)",
				"endpoint '%s' is a row of simulation %s", which, r.SimulationID)
		}
	}
	propose, err := s.Access.Subtrees(ctx, scope.DreamerPropose)
	if err != nil {
		return err
	}
	if !propose.Contains(from.WorkareaIDPath) && !propose.Contains(to.WorkareaIDPath) {
		return errs.New(errs.Denied, "claim edge proposal requires dreamer(propose) on ≥1 endpoint's workarea (D7)",
			"this key holds dreamer.propose on neither endpoint's workarea")
	}
	e.From, e.To, e.FromIDPath, e.ToIDPath = from.ID, to.ID, from.WorkareaIDPath, to.WorkareaIDPath
	return nil
}

// Declare records that artifact derives from targets.
func (s *Service) Declare(ctx context.Context, tenant, artifact string, targets []string, at time.Time) error {
	return s.Repo.Declare(ctx, tenant, artifact, targets, at)
}

// NextForReview leases the oldest pending edge the reviewer may ratify:
// both endpoints inside its dreamer.review subtrees, not its principal's
// proposal (R2). ok is false when there is none.
func (s *Service) NextForReview(ctx context.Context, tenant, principal string, within Subtrees, skip []string, now, leaseUntil time.Time) (domain.Edge, bool, error) {
	e, err := s.Repo.EdgeNextForReview(ctx, tenant, principal, within, skip, now, leaseUntil)
	if errors.Is(err, ErrNotFound) {
		return domain.Edge{}, false, nil
	}
	return e, err == nil, err
}

// ServedEdge reads an edge for the reviewer it is served to, in the
// caller's unit of work: both endpoints must still lie inside within.
func (s *Service) ServedEdge(ctx context.Context, tenant, edgeID string, within Subtrees) (domain.Edge, error) {
	e, err := s.Repo.EdgeGetForUpdate(ctx, tenant, edgeID)
	if err != nil {
		return e, fmt.Errorf("load edge: %w", err)
	}
	if !within.Contains(e.FromIDPath) || !within.Contains(e.ToIDPath) {
		return domain.Edge{}, errs.New(errs.Denied, "a served item is shown to a reviewer with dreamer.review effective access on it now (D7, D14)",
			"this key no longer holds dreamer.review on both endpoints of edge %s", e.ID)
	}
	return e, nil
}

// QueueCounts counts the pending edges the reviewer could ratify, per the
// workarea of their from endpoint.
func (s *Service) QueueCounts(ctx context.Context, tenant, principal string, within Subtrees, now time.Time) ([]QueueCount, error) {
	return s.Repo.EdgesQueueCounts(ctx, tenant, principal, within, now)
}

// ReleaseEdge gives a pending edge back to the queue if lease is still
// its lease, in the caller's unit of work.
func (s *Service) ReleaseEdge(ctx context.Context, tenant, edgeID string, lease time.Time) error {
	return s.Repo.EdgeLeaseClear(ctx, tenant, edgeID, lease)
}

// Decide ratifies or rejects a leased edge, journalled, in the caller's
// unit of work. within is where the reviewer holds dreamer.review now:
// both endpoints must still lie inside it, as when the edge was served.
func (s *Service) Decide(ctx context.Context, tenant, edgeID string, approve bool, byKey string, within Subtrees) (domain.Edge, error) {
	e, err := s.Repo.EdgeGetForUpdate(ctx, tenant, edgeID)
	if err != nil {
		return e, fmt.Errorf("lock edge: %w", err)
	}
	if !within.Contains(e.FromIDPath) || !within.Contains(e.ToIDPath) {
		return e, errs.New(errs.Denied, "a verdict needs dreamer.review effective access on both endpoints when it is given (D7, D14)",
			"this key no longer holds dreamer.review on both endpoints of edge %s", e.ID)
	}
	from, to := e.Workareas()
	for _, id := range []string{from, to} {
		w, err := s.Access.Workarea(ctx, id)
		if err != nil {
			return e, err
		}
		if w.Status == "validated" {
			return e, errs.New(errs.Frozen, "status ladder: a validated workarea refuses new writes, verdicts included (D8)",
				"workarea %s is validated; edge %s takes no verdict", w.ID, e.ID)
		}
	}
	if err := e.Decide(approve, s.now()); err != nil {
		return e, err
	}
	if err := s.Repo.EdgeDecide(ctx, e, byKey); err != nil {
		return e, fmt.Errorf("decide edge: %w", err)
	}
	typ := string(e.Kind) + ".relate_ratified"
	if !approve {
		typ = string(e.Kind) + ".relate_rejected"
	}
	_, err = s.Journal.Append(ctx, tenant, journal.Event{
		Type: typ, Actor: byKey, Workarea: from, Subject: map[string]any{"edge_id": e.ID},
		Payload: map[string]any{"label": e.Label, "from": e.From, "to": e.To, "proposer": e.ProposerKeyID},
	})
	return e, err
}

// Closure returns every artifact the given one derives from or points at
// with a claim edge, transitively, starting from it and from the claims
// with a claim edge into it (one counts as an edge from it). A
// closure of more than limit artifacts is review.closure_bound: a cut
// closure would let an ancestor's author review (R2 fails closed).
func (s *Service) Closure(ctx context.Context, tenant, artifact string, limit int) ([]string, error) {
	ids, err := s.Repo.Closure(ctx, tenant, artifact, limit+1)
	if err != nil {
		return nil, err
	}
	if len(ids) > limit {
		return nil, closureBound(artifact, limit)
	}
	return ids, nil
}

func closureBound(artifact string, limit int) error {
	return errs.New(errs.ClosureBound, "R2: independence is checked over the whole lineage closure; one larger than OML_REVIEW_CLOSURE_MAX is never served (fail closed)",
		"artifact %s has a lineage closure of more than %d artifacts", artifact, limit)
}

// Closures is Closure for many artifacts at once, in one query capped at
// limit members per artifact plus one: below the cap every closure is
// whole and is judged by its own size; only a query that reaches the cap
// (some closure is over the bound and the cut may have fallen anywhere)
// falls back to one query per artifact. refused holds review.closure_bound
// for each artifact whose closure has more than limit members.
func (s *Service) Closures(ctx context.Context, tenant string, artifacts []string, limit int) (closures map[string][]string, refused map[string]error, err error) {
	closures, refused = map[string][]string{}, map[string]error{}
	capRows := limit*len(artifacts) + 1
	all, n, err := s.Repo.Closures(ctx, tenant, artifacts, capRows)
	if err != nil {
		return nil, nil, err
	}
	if n < capRows {
		for _, a := range artifacts {
			if len(all[a]) > limit {
				refused[a] = closureBound(a, limit)
			} else {
				closures[a] = all[a]
			}
		}
		return closures, refused, nil
	}
	for _, a := range artifacts {
		ids, err := s.Closure(ctx, tenant, a, limit)
		switch {
		case errs.Is(err, errs.ClosureBound):
			refused[a] = err
		case err != nil:
			return nil, nil, err
		default:
			closures[a] = ids
		}
	}
	return closures, refused, nil
}

// Parents lists what artifact derives from directly.
func (s *Service) Parents(ctx context.Context, tenant, artifact string) ([]string, error) {
	return s.Repo.Parents(ctx, tenant, artifact)
}

// WorkareaEdges lists a workarea's live outgoing edges (the access context
// filters them to what the caller may read).
func (s *Service) WorkareaEdges(ctx context.Context, tenant, workarea string) ([]domain.Edge, error) {
	return s.Repo.WorkareaEdgesFrom(ctx, tenant, workarea)
}
