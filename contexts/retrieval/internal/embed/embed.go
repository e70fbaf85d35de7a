// Package embed turns texts into L2-normalised vectors for the vector leg of
// recall: a deterministic built-in embedder that needs no network and an
// OpenAI-compatible /v1/embeddings client.
package embed

import (
	"context"
	"math"
)

// Role says which side a text is embedded for.
type Role int

const (
	// Document is a stored text, embedded once when it is indexed.
	Document Role = iota
	// Query is a recall query, embedded per request.
	Query
)

// String names the role for logs.
func (r Role) String() string {
	switch r {
	case Document:
		return "document"
	case Query:
		return "query"
	default:
		return "unknown"
	}
}

// Embedder turns texts into L2-normalised vectors. Implementations are safe
// for concurrent use.
type Embedder interface {
	// Model is the stable id stored with each vector, e.g. "oml-builtin-v1-384";
	// a change of id means stored vectors must be rebuilt.
	Model() string
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Embed embeds a batch of texts, one vector per text, in order. weights,
	// used for the Query role only, maps a term (as [Terms] returns it) to its
	// corpus rarity weight (e.g. [IDF]); nil means unweighted. Document vectors
	// never depend on corpus statistics, so stored vectors never need
	// re-embedding as the corpus grows. A text with nothing to embed gets the
	// zero vector, which callers skip.
	Embed(ctx context.Context, role Role, texts []string, weights map[string]float32) ([][]float32, error)
}

// normalize scales v to unit L2 norm in place. A zero (or non-finite) vector
// becomes all zeros, never NaN.
func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsInf(sum, 0) || math.IsNaN(sum) {
		clear(v)
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}
