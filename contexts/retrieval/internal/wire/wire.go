// Package wire holds the retrieval context's JSON shapes (seed 000),
// shared by POST /v1/recall and oml_recall.
package wire

import (
	"math"
	"time"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/domain"
	"github.com/omlhub/oml/platform/scope"
)

// RecallIn is the input of oml_recall and POST /v1/recall.
type RecallIn struct {
	Query string `json:"query" jsonschema:"what to look for, in plain words"`
	Scope string `json:"scope" jsonschema:"a workarea (id or path): its subtree is searched, within this key's read access"`
	K     int    `json:"k,omitempty" jsonschema:"hits to return, 1–50 (default 8)"`
}

// ToQuery converts the input.
func (in RecallIn) ToQuery() domain.Query {
	return domain.Query{Text: in.Query, Scope: in.Scope, K: in.K}
}

// Steering is a steering row: never ranked, no score.
type Steering struct {
	ArtifactID   string `json:"artifact_id"`
	Kind         string `json:"kind"`
	Text         string `json:"text"`
	WorkareaPath string `json:"workarea_path"`
	Provenance   string `json:"provenance,omitempty"`
	SimulationID string `json:"simulation_id,omitempty"`
}

// Attachment is a hit's attachment digest.
type Attachment struct {
	SHA256    string `json:"sha256"`
	MediaType string `json:"media_type"`
	SizeBytes int64  `json:"size_bytes"`
}

// Hit is a ranked promoted claim.
type Hit struct {
	ArtifactID   string       `json:"artifact_id"`
	ClaimKey     string       `json:"claim_key"`
	Version      int          `json:"version"`
	State        string       `json:"state"`
	Score        float64      `json:"score"`
	Text         string       `json:"text"`
	WorkareaPath string       `json:"workarea_path"`
	PromotedAt   time.Time    `json:"promoted_at"`
	Attachments  []Attachment `json:"attachments"`
	// Provenance is "simulation" for a row of a simulation (D10), shown
	// only to its audience; omitted otherwise.
	Provenance   string `json:"provenance,omitempty"`
	SimulationID string `json:"simulation_id,omitempty"`
}

// RecallOut is the output of oml_recall: steering first, then hits.
type RecallOut struct {
	Steering []Steering `json:"steering"`
	Hits     []Hit      `json:"hits"`
}

// ToRecallOut converts a recall's result.
func ToRecallOut(r app.Result) RecallOut {
	out := RecallOut{Steering: make([]Steering, len(r.Steering)), Hits: make([]Hit, len(r.Hits))}
	for i, s := range r.Steering {
		out.Steering[i] = Steering{ArtifactID: s.Entry.ArtifactID, Kind: s.Entry.Kind, Text: s.Entry.Text, WorkareaPath: s.WorkareaPath,
			Provenance: scope.Provenance(s.Entry.SimulationID), SimulationID: s.Entry.SimulationID}
	}
	for i, h := range r.Hits {
		e := h.Entry
		hit := Hit{
			ArtifactID: e.ArtifactID, ClaimKey: e.ClaimKey, Version: e.Version, State: "promoted",
			Score: math.Round(h.Score*10000) / 10000, Text: e.Text, WorkareaPath: h.WorkareaPath,
			PromotedAt: e.PromotedAt.UTC(), Attachments: make([]Attachment, len(e.Attachments)),
			Provenance: scope.Provenance(e.SimulationID), SimulationID: e.SimulationID,
		}
		for j, a := range e.Attachments {
			hit.Attachments[j] = Attachment(a)
		}
		out.Hits[i] = hit
	}
	return out
}
