// Package memstore is an in-memory app.Repository for the lineage
// context's application tests. It passes the same contract suite as the
// Postgres adapter (repotest).
package memstore

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/omlhub/oml/contexts/lineage/internal/app"
	"github.com/omlhub/oml/contexts/lineage/internal/domain"
)

type derivation struct{ tenant, from, to string }

// Store implements app.Repository. One mutex serializes every call, so
// EdgeNextForReview's pick and lease are one step, as SKIP LOCKED makes
// them in a Postgres unit of work.
type Store struct {
	mu          sync.Mutex
	derivations []derivation
	edges       map[string]domain.Edge // tenant+"/"+id
}

var _ app.Repository = (*Store)(nil)

// New returns an empty store.
func New() *Store { return &Store{edges: map[string]domain.Edge{}} }

// Declare records artifact → targets derivations (a repeat is a no-op).
func (s *Store) Declare(_ context.Context, tenant, artifact string, targets []string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range targets {
		d := derivation{tenant, artifact, t}
		if !slices.Contains(s.derivations, d) {
			s.derivations = append(s.derivations, d)
		}
	}
	return nil
}

// forward lists what id derives from and the claims its live claim edges
// point at.
func (s *Store) forward(tenant, id string) []string {
	var out []string
	for _, d := range s.derivations {
		if d.tenant == tenant && d.from == id {
			out = append(out, d.to)
		}
	}
	for _, e := range s.liveClaimEdges(tenant) {
		if e.From == id {
			out = append(out, e.To)
		}
	}
	return out
}

func (s *Store) liveClaimEdges(tenant string) []domain.Edge {
	var out []domain.Edge
	for _, e := range s.sortedEdges(tenant) {
		if e.Kind == domain.KindClaim && e.State != domain.Rejected {
			out = append(out, e)
		}
	}
	return out
}

// closure walks, breadth first, from artifact and the claims with a live
// claim edge into it, along derivations and outgoing live claim edges, and
// returns at most limit of what it reaches besides artifact.
func (s *Store) closure(tenant, artifact string, limit int) []string {
	seen := map[string]bool{artifact: true}
	out := []string{}
	frontier := []string{artifact}
	for _, e := range s.liveClaimEdges(tenant) {
		if e.To == artifact && !seen[e.From] {
			seen[e.From] = true
			if len(out) == limit {
				return out
			}
			out = append(out, e.From)
			frontier = append(frontier, e.From)
		}
	}
	for len(frontier) > 0 {
		var next []string
		for _, id := range frontier {
			for _, n := range s.forward(tenant, id) {
				if seen[n] {
					continue
				}
				if len(out) == limit {
					return out
				}
				seen[n] = true
				out = append(out, n)
				next = append(next, n)
			}
		}
		frontier = next
	}
	return out
}

// Closure is the closure of one artifact, at most limit members.
func (s *Store) Closure(_ context.Context, tenant, artifact string, limit int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closure(tenant, artifact, limit), nil
}

// Closures is Closure for many roots, at most limit members in all.
func (s *Store) Closures(_ context.Context, tenant string, roots []string, limit int) (map[string][]string, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, n := map[string][]string{}, 0
	for _, r := range roots {
		if n == limit {
			break
		}
		ids := s.closure(tenant, r, limit-n)
		if len(ids) > 0 {
			out[r] = ids
		}
		n += len(ids)
	}
	return out, n, nil
}

// Parents lists what artifact derives from directly, ordered.
func (s *Store) Parents(_ context.Context, tenant, artifact string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{}
	for _, d := range s.derivations {
		if d.tenant == tenant && d.from == artifact {
			out = append(out, d.to)
		}
	}
	slices.Sort(out)
	return out, nil
}

// DerivationsTouching lists derivations with an end among ids, ordered by
// (from, to).
func (s *Store) DerivationsTouching(_ context.Context, tenant string, ids []string) ([]app.Derivation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []app.Derivation{}
	for _, d := range s.derivations {
		if d.tenant == tenant && (slices.Contains(ids, d.from) || slices.Contains(ids, d.to)) {
			out = append(out, app.Derivation{From: d.from, To: d.to})
		}
	}
	slices.SortFunc(out, func(a, b app.Derivation) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return out, nil
}

// EdgeInsert stores a pending edge; a live edge with the same (kind, from,
// to, label) is a conflict.
func (s *Store) EdgeInsert(_ context.Context, e domain.Edge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.edges[e.TenantID+"/"+e.ID]; ok {
		return app.ErrConflict
	}
	for _, o := range s.edges {
		if o.TenantID == e.TenantID && o.Kind == e.Kind && o.From == e.From && o.To == e.To && o.Label == e.Label && o.State != domain.Rejected {
			return app.ErrConflict
		}
	}
	e.State, e.DecidedAt, e.LeasedUntil = domain.Pending, nil, nil
	s.edges[e.TenantID+"/"+e.ID] = e
	return nil
}

// EdgeGetForUpdate loads an edge.
func (s *Store) EdgeGetForUpdate(_ context.Context, tenant, id string) (domain.Edge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.edges[tenant+"/"+id]
	if !ok {
		return domain.Edge{}, app.ErrNotFound
	}
	return e, nil
}

// EdgeNextForReview leases the oldest pending, unleased edge with both
// endpoints within the subtrees and another principal's proposal.
func (s *Store) EdgeNextForReview(_ context.Context, tenant, principal string, within app.Subtrees, skip []string, now, leaseUntil time.Time) (domain.Edge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *domain.Edge
	for _, e := range s.edges {
		if e.TenantID != tenant || e.State != domain.Pending || e.ProposerPrincipal == principal ||
			(e.LeasedUntil != nil && e.LeasedUntil.After(now)) ||
			!within.Contains(e.FromIDPath) || !within.Contains(e.ToIDPath) || slices.Contains(skip, e.ID) {
			continue
		}
		if best == nil || e.ProposedAt.Before(best.ProposedAt) {
			best = &e
		}
	}
	if best == nil {
		return domain.Edge{}, app.ErrNotFound
	}
	best.LeasedUntil = &leaseUntil
	s.edges[tenant+"/"+best.ID] = *best
	return *best, nil
}

// EdgesQueueCounts counts what EdgeNextForReview could serve, leased
// edges included, per from-endpoint workarea.
func (s *Store) EdgesQueueCounts(_ context.Context, tenant, principal string, within app.Subtrees, now time.Time) ([]app.QueueCount, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	by := map[string]*app.QueueCount{}
	var out []app.QueueCount
	for _, e := range s.edges {
		if e.TenantID != tenant || e.State != domain.Pending || e.ProposerPrincipal == principal ||
			!within.Contains(e.FromIDPath) || !within.Contains(e.ToIDPath) {
			continue
		}
		from, _ := e.Workareas()
		c := by[from]
		if c == nil {
			c = &app.QueueCount{WorkareaID: from, Oldest: e.ProposedAt}
			by[from] = c
		}
		c.Waiting++
		if e.LeasedUntil != nil && e.LeasedUntil.After(now) {
			c.Leased++
		}
		if e.ProposedAt.Before(c.Oldest) {
			c.Oldest = e.ProposedAt
		}
	}
	for _, c := range by {
		out = append(out, *c)
	}
	return out, nil
}

// EdgeLeaseClear ends a pending edge's lease if it is still lease.
func (s *Store) EdgeLeaseClear(_ context.Context, tenant, id string, lease time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tenant + "/" + id
	if e, ok := s.edges[k]; ok && e.State == domain.Pending && e.LeasedUntil != nil && e.LeasedUntil.Equal(lease) {
		e.LeasedUntil = nil
		s.edges[k] = e
	}
	return nil
}

// EdgeDecide stores a decision and ends the lease.
func (s *Store) EdgeDecide(_ context.Context, e domain.Edge, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := e.TenantID + "/" + e.ID
	stored, ok := s.edges[k]
	if !ok {
		return nil // an UPDATE of no row
	}
	stored.State, stored.DecidedAt, stored.LeasedUntil = e.State, e.DecidedAt, nil
	s.edges[k] = stored
	return nil
}

// sortedEdges lists a tenant's edges ordered by id.
func (s *Store) sortedEdges(tenant string) []domain.Edge {
	var out []domain.Edge
	for _, e := range s.edges {
		if e.TenantID == tenant {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b domain.Edge) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// ClaimEdgesTouching lists live claim edges with an endpoint among ids,
// ordered by id.
func (s *Store) ClaimEdgesTouching(_ context.Context, tenant string, ids []string) ([]domain.Edge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.Edge{}
	for _, e := range s.sortedEdges(tenant) {
		if e.Kind == domain.KindClaim && e.State != domain.Rejected && (slices.Contains(ids, e.From) || slices.Contains(ids, e.To)) {
			out = append(out, e)
		}
	}
	return out, nil
}

// WorkareaEdgesFrom lists a workarea's live outgoing edges, oldest first.
func (s *Store) WorkareaEdgesFrom(_ context.Context, tenant, workarea string) ([]domain.Edge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.Edge{}
	for _, e := range s.sortedEdges(tenant) {
		if e.Kind == domain.KindWorkarea && e.State != domain.Rejected && e.From == workarea {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b domain.Edge) int { return a.ProposedAt.Compare(b.ProposedAt) })
	return out, nil
}

// Tx is an app.Transactor for the store: fn runs inline (each store call
// is atomic on its own).
type Tx struct{}

// InTx runs fn.
func (Tx) InTx(ctx context.Context, fn func(ctx context.Context) error) error { return fn(ctx) }
