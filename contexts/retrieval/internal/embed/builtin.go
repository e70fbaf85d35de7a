package embed

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
)

// DefaultDim is the built-in embedder's dimension when none is given.
const DefaultDim = 384

// builtinVersion names the feature set, stopwords and weights below; bump it
// whenever they change, since vectors of different versions do not compare.
const builtinVersion = "v2"

// Relative weights of the feature families, tuned on Cranfield at 384
// dimensions (BenchmarkCranfield). Trigrams add morphology and fuzzy
// matches. Bigrams cost more in hash collisions than they add there (0.6
// lost about 0.01 nDCG@10), so they stay light and only mark phrases.
const (
	weightWord    = 1.0
	weightBigram  = 0.15
	weightTrigram = 0.25
)

// A document's lead — its first sentence — counts leadTimes: its features
// are tallied as if it were written four times, as a title is weighed (on
// Cranfield the vector leg with feedback went from 0.376 to 0.401
// nDCG@10). retrieval.entry_tsv (migration 0013) finds the same lead
// for the full-text leg and weighs it the same.
const (
	leadTimes    = 4
	maxLeadRunes = 300
	// leadSpace is the white space that ends a lead: ASCII only, as in
	// SQL, whose [:space:] would follow the database's locale.
	leadSpace = " \t\n\v\f\r"
)

// Builtin is the deterministic, network-free embedder: signed feature hashing
// of stemmed words, adjacent-word bigrams and character trigrams, with
// sublinear term frequency, and rarity weights on the query side only. It is
// safe for concurrent use.
type Builtin struct {
	dim int
}

var _ Embedder = (*Builtin)(nil)

// NewBuiltin returns the built-in embedder with dim dimensions (DefaultDim
// when dim ≤ 0).
func NewBuiltin(dim int) *Builtin {
	if dim <= 0 {
		dim = DefaultDim
	}
	return &Builtin{dim: dim}
}

// Model returns "oml-builtin-v2-<dim>".
func (b *Builtin) Model() string { return fmt.Sprintf("oml-builtin-%s-%d", builtinVersion, b.dim) }

// Dim returns the vector length.
func (b *Builtin) Dim() int { return b.dim }

// Embed embeds texts. A Document's lead (LeadEnd) counts leadTimes. For the
// Query role every feature is scaled by the square root of its term's rarity
// weight — a bigram by the smaller of its two terms', a trigram by its
// word's. The square root keeps common query words in play: with 384
// buckets several matching words beat one rare word lost in collisions. A term missing from a non-nil weights is taken as rare:
// it gets the largest weight among the text's other terms, or 1 if none has
// one. A negative weight counts as 0, a NaN one as missing. A text without
// terms (or whose terms all weigh 0) gets the zero vector.
func (b *Builtin) Embed(ctx context.Context, role Role, texts []string, weights map[string]float32) ([][]float32, error) {
	if role != Document && role != Query {
		return nil, fmt.Errorf("embed: unknown role %d", role)
	}
	if role == Document {
		weights = nil
	}
	out := make([][]float32, len(texts))
	// One backing array: one allocation, and the vectors stay adjacent.
	backing := make([]float32, len(texts)*b.dim)
	s := scratchPool.Get().(*scratch)
	defer s.release()
	for i, text := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		vec := backing[i*b.dim : (i+1)*b.dim : (i+1)*b.dim]
		lead := 0
		if role == Document {
			lead = LeadEnd(text)
		}
		s.embed(vec, text, lead, weights)
		out[i] = vec
	}
	return out, nil
}

// scratch is per-call working memory, pooled so that embedding allocates
// little beyond its result.
type scratch struct {
	t      tally
	word   []byte
	runes  []rune
	hashes []uint64
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{t: tally{index: make(map[uint64]int32, 512)}}
}}

// maxPooledFeatures bounds what the pool keeps: scratch that grew on a huge
// text is dropped rather than pinned.
const maxPooledFeatures = 1 << 14

func (s *scratch) release() {
	if cap(s.t.feats) > maxPooledFeatures {
		return
	}
	scratchPool.Put(s)
}

// embed writes the normalised vector of text into vec; the features of
// text[:lead] count leadTimes.
func (s *scratch) embed(vec []float32, text string, lead int, weights map[string]float32) {
	s.t.reset()
	missing := float32(1)
	if weights != nil {
		missing = s.missingWeight(text, weights)
	}
	var (
		prev  string
		prevW float32
		times float32 = leadTimes
	)
	add := func(word []byte, stem string) {
		w := float32(1)
		if weights != nil {
			w = queryWeight(weights, stem, missing)
		}
		s.t.add(wordHash(stem), weightWord*w, times)
		if prev != "" {
			s.t.add(bigramHash(prev, stem), weightBigram*min(prevW, w), times)
		}
		prev, prevW = stem, w
		s.hashes, s.runes = trigramHashes(s.hashes[:0], word, s.runes)
		for _, h := range s.hashes {
			s.t.add(h, weightTrigram*w, times)
		}
	}
	if lead > 0 {
		s.word = scanWords(text[:lead], s.word, add)
	}
	times = 1
	s.word = scanWords(text[lead:], s.word, add)
	s.t.project(vec)
	normalize(vec)
}

// LeadEnd returns the length in bytes of text's lead: its first sentence,
// up to the first '.', '!' or '?' followed by ASCII white space or the end,
// when that is at most maxLeadRunes characters and leaves some text (other
// than ASCII white space) after it; 0 when text has no lead.
// retrieval.entry_tsv (migration 0013) applies the same rule in SQL.
func LeadEnd(text string) int {
	runes := 0
	for i, r := range text {
		if runes++; runes > maxLeadRunes {
			return 0
		}
		if r != '.' && r != '!' && r != '?' {
			continue
		}
		end := i + 1
		if end < len(text) && !strings.ContainsRune(leadSpace, rune(text[end])) {
			continue
		}
		if strings.TrimLeft(text[end:], leadSpace) == "" {
			return 0
		}
		return end
	}
	return 0
}

// queryWeight is the factor of a query term's features.
func queryWeight(weights map[string]float32, stem string, missing float32) float32 {
	w, ok := weights[stem]
	if !ok || w != w { // absent or NaN
		w = missing
	}
	if w <= 0 {
		return 0
	}
	return float32(math.Sqrt(float64(w)))
}

// missingWeight is the weight of a query term absent from weights: the
// largest weight among the text's present terms, or 1 if none is present.
func (s *scratch) missingWeight(text string, weights map[string]float32) float32 {
	var (
		best  float32
		found bool
	)
	s.word = scanWords(text, s.word, func(_ []byte, stem string) {
		if w, ok := weights[stem]; ok && w == w {
			best = max(best, w)
			found = true
		}
	})
	if !found {
		return 1
	}
	return best
}
