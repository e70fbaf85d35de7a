// Package wire holds the lineage context's JSON shapes (seed 000), shared
// by its HTTP routes and MCP tools.
package wire

import (
	"github.com/omlhub/oml/contexts/lineage/internal/app"
	"github.com/omlhub/oml/contexts/lineage/internal/domain"
	"github.com/omlhub/oml/platform/scope"
)

// ProposeIn is the input of oml_relate_propose and POST /v1/edges.
type ProposeIn struct {
	Kind  string `json:"kind" jsonschema:"workarea or claim"`
	Label string `json:"label" jsonschema:"workarea edges: relates_to, continues, derived_from or mirrors"`
	From  string `json:"from" jsonschema:"workarea id or path, or artifact id"`
	To    string `json:"to" jsonschema:"workarea id or path, or artifact id"`
	Note  string `json:"note,omitempty"`
}

// Proposal converts the input.
func (p ProposeIn) Proposal() domain.Proposal {
	return domain.Proposal{Kind: domain.Kind(p.Kind), Label: p.Label, From: p.From, To: p.To, Note: p.Note}
}

// ProposeOut is the output of oml_relate_propose.
type ProposeOut struct {
	EdgeID      string `json:"edge_id"`
	Kind        string `json:"kind"`
	Label       string `json:"label"`
	State       string `json:"state"`
	ProposerKey string `json:"proposer_key"`
	Awaiting    string `json:"awaiting"`
}

// ToProposeOut converts a proposed edge.
func ToProposeOut(e domain.Edge) ProposeOut {
	return ProposeOut{
		EdgeID: e.ID, Kind: string(e.Kind), Label: e.Label, State: string(e.State), ProposerKey: e.ProposerKeyID,
		Awaiting: "ratification by a dreamer(review) key on both endpoints, ratifier ≠ proposer (R2)",
	}
}

// GraphIn is the input of oml_graph.
type GraphIn struct {
	Scope string   `json:"scope" jsonschema:"the workarea whose subtree is read (id or path)"`
	Roots []string `json:"roots,omitempty" jsonschema:"artifact ids to start from (default: the scope's newest claims)"`
	Depth int      `json:"depth,omitempty" jsonschema:"hops from the roots, 1–5 (default 2)"`
	Limit int      `json:"limit,omitempty" jsonschema:"claims at most, 1–500 (default 100)"`
	// Cursor continues a truncated answer.
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of a truncated answer to the same query: the next page"`
}

// Claim is a claim node.
type Claim struct {
	ArtifactID string `json:"artifact_id"`
	ClaimKey   string `json:"claim_key"`
	Version    int    `json:"version"`
	Kind       string `json:"kind"`
	State      string `json:"state"`
	Workarea   string `json:"workarea"`
	// Provenance is "simulation" for a simulation's row (D10), else
	// omitted.
	Provenance   string `json:"provenance,omitempty"`
	SimulationID string `json:"simulation_id,omitempty"`
}

// Edge is a graph edge.
type Edge struct {
	Kind   string `json:"kind"`
	Label  string `json:"label,omitempty"`
	From   string `json:"from"`
	To     string `json:"to"`
	State  string `json:"state"`
	EdgeID string `json:"edge_id,omitempty"`
}

// GraphOut is the output of oml_graph.
type GraphOut struct {
	Claims     []Claim `json:"claims"`
	Edges      []Edge  `json:"edges"`
	Truncated  bool    `json:"truncated"`
	NextCursor *string `json:"next_cursor"`
}

// ToGraphOut converts a graph.
func ToGraphOut(g app.Graph) GraphOut {
	out := GraphOut{Claims: make([]Claim, len(g.Claims)), Edges: make([]Edge, len(g.Edges)), Truncated: g.Truncated}
	if g.NextCursor != "" {
		out.NextCursor = &g.NextCursor
	}
	for i, c := range g.Claims {
		out.Claims[i] = Claim{ArtifactID: c.ID, ClaimKey: c.ClaimKey, Version: c.Version, Kind: c.Kind, State: c.State, Workarea: c.WorkareaID,
			Provenance: scope.Provenance(c.SimulationID), SimulationID: c.SimulationID}
	}
	for i, e := range g.Edges {
		out.Edges[i] = Edge{Kind: e.Kind, Label: e.Label, From: e.From, To: e.To, State: e.State, EdgeID: e.EdgeID}
	}
	return out
}
