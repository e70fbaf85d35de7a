// Package mcptools registers the lineage context's MCP tools:
// oml_relate_propose and oml_graph. Ratification is not here: it is a
// dreamer(review) verdict behind the serve ceremony on the HTTP API.
package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/lineage/internal/app"
	"github.com/omlhub/oml/contexts/lineage/internal/wire"
	"github.com/omlhub/oml/platform/transport"
)

// Register adds the tools to t.
func Register(t *transport.Tools, svc *app.Service) {
	transport.Add(t, transport.ToolSpec{
		Name:  "oml_relate_propose",
		Title: "Propose an edge",
		Description: "Propose a labelled edge between two workareas (relates_to, continues, derived_from, mirrors) or two " +
			"claims. The edge is pending and confers nothing until a different dreamer(review) key on both endpoints " +
			"ratifies it. Needs dreamer.propose on at least one endpoint and read access on both.",
	}, func(ctx context.Context, in wire.ProposeIn) (wire.ProposeOut, error) {
		e, err := svc.Propose(ctx, in.Proposal())
		if err != nil {
			return wire.ProposeOut{}, err
		}
		return wire.ToProposeOut(e), nil
	})

	transport.Add(t, transport.ToolSpec{
		Name:  "oml_graph",
		Title: "Graph",
		Description: "A scoped read of claims and their edges (declared derives_from, claim connections with their " +
			"pending/ratified state, supersession) inside the scope's subtree. Serialize, don't compute: the server " +
			"returns the subgraph; an edge whose far endpoint you cannot read shows that endpoint's id only.",
		ReadOnly: true,
	}, func(ctx context.Context, in wire.GraphIn) (wire.GraphOut, error) {
		g, err := svc.Graph(ctx, app.GraphQuery{Scope: in.Scope, Roots: in.Roots, Depth: in.Depth, Limit: in.Limit, Cursor: in.Cursor})
		if err != nil {
			return wire.GraphOut{}, err
		}
		return wire.ToGraphOut(g), nil
	})
}
