package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/omlhub/oml/contexts/lineage/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
)

// GraphQuery is an oml_graph request.
type GraphQuery struct {
	Scope string
	Roots []string
	Depth int
	Limit int
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
// other writers are absent, with their edges (R3).
type Graph struct {
	Claims    []ClaimRef
	Edges     []GraphEdge
	Truncated bool
}

// Graph serializes, it does not compute: it walks declared derivations,
// claim edges and supersession from the roots (or the scope's newest
// claims) up to depth, and returns what it reached. A depth or limit above
// the ceiling is refused, not truncated; reaching limit nodes marks the
// answer truncated.
func (s *Service) Graph(ctx context.Context, q GraphQuery) (Graph, error) {
	c, ok := auth.From(ctx)
	if !ok || c.Role == "operator" {
		return Graph{}, errs.New(errs.VerbCeiling, "operator never writes, reads or reviews content (D9)", "this key has no graph view")
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
	inScope := Subtrees{Allow: []string{scope.IDPath}}

	g := Graph{}
	nodes := map[string]ClaimRef{}
	frontier := q.Roots
	if len(frontier) == 0 {
		recent, err := s.Claims.Recent(ctx, scope.IDPath, q.Limit)
		if err != nil {
			return g, err
		}
		for _, r := range recent {
			frontier = append(frontier, r.ID)
		}
	}
	refs, err := s.Claims.Lookup(ctx, frontier)
	if err != nil {
		return g, err
	}
	var next []string
	for _, id := range frontier {
		if r := refs[id]; r.Visibility == Readable && inside(r.WorkareaIDPath, inScope) && !g.add(nodes, r, q.Limit) {
			next = append(next, id)
		}
	}
	seenEdge := map[string]bool{}
	for depth := 0; depth < q.Depth && len(next) > 0 && !g.Truncated; depth++ {
		frontier, next = next, nil
		edges, err := s.neighbourhood(ctx, c.TenantID, frontier, nodes)
		if err != nil {
			return g, err
		}
		var far []string
		for _, e := range edges {
			far = append(far, e.From, e.To)
		}
		refs, err := s.Claims.Lookup(ctx, uniqueMissing(far, nodes))
		if err != nil {
			return g, err
		}
		for _, e := range edges {
			key := e.Kind + "|" + e.From + "|" + e.To + "|" + e.EdgeID
			if seenEdge[key] {
				continue
			}
			ends := [2]string{e.From, e.To}
			shown := true
			for _, id := range ends {
				if _, ok := nodes[id]; ok {
					continue
				}
				r := refs[id]
				switch {
				case r.Visibility == Absent:
					shown = false
				case r.Visibility == Readable && inside(r.WorkareaIDPath, inScope):
					if g.add(nodes, r, q.Limit) {
						shown = false
					} else {
						next = append(next, id)
					}
				}
				// Anything else is body-less: the edge shows its id only.
			}
			if shown {
				seenEdge[key] = true
				g.Edges = append(g.Edges, e)
			}
		}
	}
	return g, nil
}

// add appends a node unless the limit is reached (then it marks the graph
// truncated and reports true).
func (g *Graph) add(nodes map[string]ClaimRef, r ClaimRef, limit int) bool {
	if _, ok := nodes[r.ID]; ok {
		return false
	}
	if len(nodes) >= limit {
		g.Truncated = true
		return true
	}
	nodes[r.ID] = r
	g.Claims = append(g.Claims, r)
	return false
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
