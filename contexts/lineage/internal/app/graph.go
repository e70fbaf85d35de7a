package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"

	"github.com/omlhub/oml/contexts/lineage/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
)

// GraphQuery is an oml_graph request.
type GraphQuery struct {
	Scope  string
	Roots  []string
	Depth  int
	Limit  int
	Cursor string // continues a truncated answer (its next_cursor)
}

// GraphEdge is one edge in a graph answer.
type GraphEdge struct {
	Kind   string // derives_from | connection | supersedes
	From   string
	To     string
	State  string // declared | pending | ratified
	Label  string
	EdgeID string
}

// Graph is the subgraph inside the caller's read scope: claims with bodies,
// and edges whose far endpoint may be body-less (its id only). Held rows of
// other writers are absent, with their edges (R3). A truncated answer
// carries NextCursor, which continues it.
type Graph struct {
	Claims     []ClaimRef
	Edges      []GraphEdge
	Truncated  bool
	NextCursor string
}

// Graph serializes, it does not compute: it walks declared derivations,
// claim edges and supersession from the roots (or the scope's newest
// claims) up to depth, and returns what it reached. A depth or limit above
// the ceiling is refused, not truncated; reaching limit nodes marks the
// answer truncated and returns a cursor for the next page, which walks
// again from the roots and returns the claims after the ones already
// served, with the edges they bring. Every answer is logged like a recall.
func (s *Service) Graph(ctx context.Context, q GraphQuery) (Graph, error) {
	c, err := auth.ContentCaller(ctx, "graph view")
	if err != nil {
		return Graph{}, err
	}
	if q.Depth == 0 {
		q.Depth = domain.DefaultDepth
	}
	if q.Limit == 0 {
		q.Limit = domain.DefaultLimit
	}
	if q.Depth < 1 || q.Depth > domain.MaxDepth || q.Limit < 1 || q.Limit > domain.MaxLimit || len(q.Roots) > domain.MaxRoots {
		return Graph{}, errs.New(errs.LimitCeiling, "the graph read is bounded: depth ≤ 5, limit ≤ 500, roots ≤ 50; an answer is never silently truncated",
			"depth %d, limit %d, %d roots exceed the served ceiling", q.Depth, q.Limit, len(q.Roots))
	}
	for i, r := range q.Roots {
		if !ids.Has(ids.Artifact, r) {
			return Graph{}, errs.Invalid("roots[%d] is not an artifact id", i)
		}
	}
	scope, err := s.Access.Workarea(ctx, q.Scope)
	if err != nil {
		return Graph{}, err
	}
	if !scope.Reader {
		return Graph{}, errs.New(errs.NotFound, "effective access (D7); unknown and out-of-scope are indistinguishable",
			"no readable workarea with that reference for this key")
	}
	digest := domain.GraphQueryDigest(scope.ID, q.Roots, q.Depth, q.Limit)
	offset := 0
	if q.Cursor != "" {
		cur, err := domain.ParseGraphCursor(q.Cursor, digest)
		if err != nil {
			return Graph{}, err
		}
		offset = cur.Offset
	}
	if offset+q.Limit > domain.MaxGraphWalk {
		return Graph{}, errs.New(errs.LimitCeiling, "the graph read is bounded: its pages reach at most 5,000 claims from the roots",
			"this page would reach past claim %d; start again from narrower roots", domain.MaxGraphWalk)
	}
	w, err := s.walk(ctx, c.TenantID, scope.IDPath, q, offset+q.Limit)
	if err != nil {
		return Graph{}, err
	}
	g := w.page(offset)
	if g.Truncated {
		g.NextCursor = domain.GraphCursor{Offset: offset + q.Limit, Query: digest}.Encode()
	}
	returned, sims := make([]string, len(g.Claims)), make([]string, len(g.Claims))
	for i, r := range g.Claims {
		returned[i], sims[i] = r.ID, r.SimulationID
	}
	sum := sha256.Sum256([]byte(digest + "|" + strconv.Itoa(offset)))
	if err := s.Reads.GraphRead(ctx, GraphRead{
		TenantID: c.TenantID, KeyID: c.KeyID, WorkareaID: scope.ID, QuerySHA256: sum[:], Returned: returned, Simulations: sims, At: s.now(),
	}); err != nil {
		return Graph{}, fmt.Errorf("read log: %w", err)
	}
	return g, nil
}

// walked is a graph walk: nodes in the order reached, and each edge with
// the number of nodes reached when it was emitted, so a page can take the
// edges its nodes brought.
type walked struct {
	nodes     map[string]ClaimRef
	order     []ClaimRef
	edges     []GraphEdge
	edgeAt    []int
	truncated bool
}

// page returns the nodes after offset and the edges emitted with them.
func (w *walked) page(offset int) Graph {
	g := Graph{Truncated: w.truncated, Claims: []ClaimRef{}, Edges: []GraphEdge{}}
	if offset < len(w.order) {
		g.Claims = w.order[offset:]
	}
	for i, e := range w.edges {
		if w.edgeAt[i] > offset {
			g.Edges = append(g.Edges, e)
		}
	}
	return g
}

// add reaches a node unless limit nodes are reached already; then the walk
// is truncated and stops (so a longer walk repeats this one exactly up to
// here, which is what makes its pages continue each other).
func (w *walked) add(r ClaimRef, limit int) bool {
	if _, ok := w.nodes[r.ID]; ok {
		return true
	}
	if len(w.order) >= limit {
		w.truncated = true
		return false
	}
	w.nodes[r.ID] = r
	w.order = append(w.order, r)
	return true
}

// walk reaches at most limit claims from the roots (or the scope's newest
// claims) inside the scope.
func (s *Service) walk(ctx context.Context, tenant, scopePath string, q GraphQuery, limit int) (*walked, error) {
	w := &walked{nodes: map[string]ClaimRef{}}
	inScope := Subtrees{Allow: []string{scopePath}}
	frontier := q.Roots
	if len(frontier) == 0 {
		recent, err := s.Claims.Recent(ctx, scopePath, q.Limit)
		if err != nil {
			return nil, err
		}
		for _, r := range recent {
			frontier = append(frontier, r.ID)
		}
	}
	refs, err := s.Claims.Lookup(ctx, frontier)
	if err != nil {
		return nil, err
	}
	var next []string
	for _, id := range frontier {
		if r := refs[id]; r.Visibility == Readable && inScope.Contains(r.WorkareaIDPath) {
			if !w.add(r, limit) {
				return w, nil
			}
			next = append(next, id)
		}
	}
	seenEdge := map[string]bool{}
	for depth := 0; depth < q.Depth && len(next) > 0; depth++ {
		frontier, next = next, nil
		edges, err := s.neighbourhood(ctx, tenant, frontier, w.nodes)
		if err != nil {
			return nil, err
		}
		var far []string
		for _, e := range edges {
			far = append(far, e.From, e.To)
		}
		refs, err := s.Claims.Lookup(ctx, uniqueMissing(far, w.nodes))
		if err != nil {
			return nil, err
		}
		for _, e := range edges {
			key := e.Kind + "|" + e.From + "|" + e.To + "|" + e.EdgeID
			if seenEdge[key] {
				continue
			}
			shown := true
			for _, id := range [2]string{e.From, e.To} {
				if _, ok := w.nodes[id]; ok {
					continue
				}
				r := refs[id]
				switch {
				case r.Visibility == Absent:
					shown = false
				case r.Visibility == Readable && inScope.Contains(r.WorkareaIDPath):
					if !w.add(r, limit) {
						return w, nil
					}
					next = append(next, id)
				}
				// Anything else is body-less: the edge shows its id only.
			}
			if shown {
				seenEdge[key] = true
				w.edges = append(w.edges, e)
				w.edgeAt = append(w.edgeAt, len(w.order))
			}
		}
	}
	return w, nil
}

// neighbourhood returns the edges touching ids: declared derivations,
// claim edges (pending and ratified) and supersession links.
func (s *Service) neighbourhood(ctx context.Context, tenant string, ids []string, nodes map[string]ClaimRef) ([]GraphEdge, error) {
	var out []GraphEdge
	ders, err := s.Repo.DerivationsTouching(ctx, tenant, ids)
	if err != nil {
		return nil, fmt.Errorf("derivations: %w", err)
	}
	for _, d := range ders {
		out = append(out, GraphEdge{Kind: "derives_from", From: d.From, To: d.To, State: "declared"})
	}
	edges, err := s.Repo.ClaimEdgesTouching(ctx, tenant, ids)
	if err != nil {
		return nil, fmt.Errorf("claim edges: %w", err)
	}
	for _, e := range edges {
		out = append(out, GraphEdge{Kind: "connection", From: e.From, To: e.To, State: string(e.State), Label: e.Label, EdgeID: e.ID})
	}
	for _, id := range ids {
		if r := nodes[id]; r.Supersedes != "" {
			out = append(out, GraphEdge{Kind: "supersedes", From: id, To: r.Supersedes, State: "declared"})
		}
	}
	return out, nil
}

func uniqueMissing(ids []string, have map[string]ClaimRef) []string {
	var out []string
	for _, id := range ids {
		if _, ok := have[id]; !ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
