// Package domain holds the retrieval context's rules: recall's ceilings,
// the steering-first contract (D12), reciprocal rank fusion of the
// full-text and vector legs, the choice between exact and HNSW search, and
// the pruning of very common query lexemes. It imports the standard
// library and platform/{errs,ids} only.
package domain

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/errs"
)

// Recall's bounds.
const (
	DefaultK      = 8
	MaxK          = 50
	MaxQueryBytes = 2000
	// MaxSteering caps the steering rows one recall returns (documented in
	// docs/API.md); they are never ranked.
	MaxSteering = 20
	// MinLegDepth is the fewest candidates each leg contributes to the
	// fusion; see LegDepth.
	MinLegDepth = 32
)

// LegDepth is how many candidates each leg contributes to a fusion for k
// hits: twice k, at least MinLegDepth. A filtered HNSW search's cost grows
// with it (iterative scans continue until that many rows pass the filter).
func LegDepth(k int) int { return max(2*k, MinLegDepth) }

// Query is a validated recall request.
type Query struct {
	Text  string
	Scope string
	K     int
}

// Validate checks a recall request.
func (q *Query) Validate() error {
	if q.K == 0 {
		q.K = DefaultK
	}
	if q.K < 1 || q.K > MaxK {
		return errs.New(errs.LimitCeiling, "recall returns at most 50 hits (k ≤ 50)", "k must be 1–%d, got %d", MaxK, q.K)
	}
	q.Text = strings.TrimSpace(q.Text)
	if q.Text == "" {
		return errs.Invalid("query is required")
	}
	if len(q.Text) > MaxQueryBytes || !utf8.ValidString(q.Text) {
		return errs.Invalid("query must be valid UTF-8 of at most %d bytes", MaxQueryBytes)
	}
	if q.Scope == "" {
		return errs.Invalid("scope is required")
	}
	return nil
}

// Fusion weights and constant of reciprocal rank fusion, tuned on the
// Cranfield collection (docs/BENCHMARKS.md).
type Fusion struct {
	K        float64
	FullText float64
	Vector   float64
	MinScore float64
}

// DefaultFusion is the fusion recall uses. The full-text leg weighs half
// the vector leg: the vector leg already carries the full-text leg's best
// entries (feedback), and on Cranfield 0.5 beat 1 on both halves of the
// queries (docs/BENCHMARKS.md).
var DefaultFusion = Fusion{K: 60, FullText: 0.5, Vector: 1}

// Ranked is one candidate and its fused score, in (0, 1].
type Ranked struct {
	ID    string
	Score float64
}

// Fuse merges two ranked lists (best first) by weighted reciprocal rank
// fusion: Σ w / (K + rank). Scores are divided by the best possible score,
// so they lie in (0, 1]. Ties keep full-text order, then id.
func (f Fusion) Fuse(fullText, vector []string, k int) []Ranked {
	score := map[string]float64{}
	order := map[string]int{}
	add := func(ids []string, w float64) {
		for i, id := range ids {
			if _, ok := order[id]; !ok {
				order[id] = len(order)
			}
			score[id] += w / (f.K + float64(i+1))
		}
	}
	if f.FullText > 0 {
		add(fullText, f.FullText)
	}
	if f.Vector > 0 {
		add(vector, f.Vector)
	}
	best := (f.FullText + f.Vector) / (f.K + 1)
	out := make([]Ranked, 0, len(score))
	for id, s := range score {
		out = append(out, Ranked{ID: id, Score: s / best})
	}
	slices.SortFunc(out, func(a, b Ranked) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return order[a.ID] - order[b.ID]
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// Method is how the vector leg searches.
type Method int

// The vector searches.
const (
	// Exact scans every row the filter reaches: exact recall, cost linear
	// in the rows.
	Exact Method = iota
	// Overfetch takes the index's nearest rows over the whole corpus
	// (Search.Candidates of them, the HNSW candidate list as wide) and
	// keeps those the filter admits: one plain index walk, as good as an
	// unfiltered search when the filter admits a large share of the rows.
	Overfetch
	// Filtered walks the index with pgvector's iterative scans, filtering
	// as it goes until enough rows pass: for mid-sized shares, where an
	// overfetch would need too many candidates and an exact scan too many
	// rows.
	Filtered
)

func (m Method) String() string {
	switch m {
	case Exact:
		return "exact"
	case Overfetch:
		return "hnsw"
	}
	return "hnsw-filtered"
}

// Search is the vector leg's plan.
type Search struct {
	Method Method
	// Candidates is how many of the index's nearest rows an Overfetch
	// takes before filtering.
	Candidates int
	// Subtree, when set, is the id path of the subtree whose own HNSW
	// index an Overfetch walks (SubtreePlan) instead of the model's
	// index over every tenant's rows.
	Subtree string
}

func (s Search) String() string {
	if s.Method == Overfetch && s.Subtree != "" {
		return fmt.Sprintf("%v %d in %s", s.Method, s.Candidates, s.Subtree)
	}
	if s.Method == Overfetch {
		return fmt.Sprintf("%v %d", s.Method, s.Candidates)
	}
	return s.Method.String()
}

// SubtreePlan chooses between the plan over the model's whole index
// (whole, from Plan) and an overfetch in the index of a subtree holding
// the scope (subtree, its id path; subtreeRows, the rows it holds, from
// the maintained counts). The subtree's index serves when the scope
// reaches more rows than an exact scan handles cheaply (ExactThreshold)
// and Plan, with the subtree's rows as the index, chooses an overfetch
// there: its graph holds only the subtree's rows, so the walk a scope
// needs is the walk it would need in an index of that size (at 1M
// entries, a 10 % subtree's own index recalled more in a fifth to a
// third of the time; docs/BENCHMARKS.md), and walks at least
// MinSubtreeWalk candidates. Otherwise whole stands.
func SubtreePlan(whole Search, reachable int64, subtree string, subtreeRows int64, depth int) Search {
	if subtree == "" || reachable <= ExactThreshold || subtreeRows <= 0 {
		return whole
	}
	s := Plan(reachable, subtreeRows, depth)
	if s.Method != Overfetch {
		return whole
	}
	s.Subtree = subtree
	s.Candidates = min(max(s.Candidates, MinSubtreeWalk), MaxCandidates)
	return s
}

// MinSubtreeWalk is the fewest candidates a walk of a subtree's index
// takes. The 64 a 100,000-entry tree's own index needs (BaseCandidates)
// recalled 0.943–0.958 of the exact top 10 in a 100,000-entry subtree's
// index at 1M entries, 100 candidates 0.979 (docs/BENCHMARKS.md).
const MinSubtreeWalk = 128

// ExactThreshold is the most rows an exact scan handles within the
// latency budget (measured: docs/BENCHMARKS.md).
const ExactThreshold = 4000

// How wide an overfetch's candidate list is. HNSW finds the true nearest
// less reliably as the index grows, and a scope keeps only its share of
// the candidates, so the list widens with both: BaseCandidates at
// BaseRows entries over the whole index, times (rows ÷ BaseRows)^¾,
// divided by √share, is what a scope needs; the walk is that times a
// further (rows ÷ BaseRows)^¼, so linear in the index's rows past
// BaseRows. Measured on the synthetic corpus with feedback
// (docs/BENCHMARKS.md): at 100k entries 64 candidates give recall@10 0.98
// over the whole tree and 200 give 0.99 in a 10 % scope (320: 0.997, at
// half as much again of the leg's time); at 1M, 317 gave only 0.94 over
// the whole tree and 361 0.94–0.95, 640 0.967. The need is at least
// depth ÷ (2 · share), so about half of depth — at least k, as depth ≥
// 2k — is expected to pass the filter (a shortfall below k falls back to
// a filtered search); the walk is at most MaxCandidates (pgvector's
// ceiling on ef_search), and a need well over it becomes a filtered
// search.
const (
	BaseCandidates = 64
	BaseRows       = 100_000
	MaxCandidates  = 1000
)

// Plan chooses the vector search for depth rows from the rows the filter
// reaches and the rows the shared index holds, every tenant's (both from
// maintained counts, never from the planner's estimates, which flip
// between ANALYZE runs): exact when the filter reaches few rows, or a
// small share of the index (where filtered HNSW loses recall); an
// overfetch when its candidate list fits MaxCandidates; else a filtered
// search.
func Plan(reachable, indexRows int64, depth int) Search {
	indexRows = max(indexRows, reachable, 1)
	share := float64(reachable) / float64(indexRows)
	if reachable <= ExactThreshold || (share < 0.02 && reachable <= 4*ExactThreshold) {
		return Search{Method: Exact}
	}
	growth := math.Pow(max(float64(indexRows)/BaseRows, 1), 0.75)
	want := max(float64(depth)/(2*share), BaseCandidates*growth/math.Sqrt(share))
	// A need up to a quarter over the ceiling still takes the ceiling:
	// the filtered search recalls less there (at 1M entries, a 10 % scope:
	// 0.914 against 0.960 for 1,000 candidates), and the index's row
	// count is an estimate anyway.
	if want = math.Ceil(want - 1e-9); want <= MaxCandidates*1.25 {
		walk := math.Ceil(want*math.Pow(max(float64(indexRows)/BaseRows, 1), 0.25) - 1e-9)
		return Search{Method: Overfetch, Candidates: min(int(walk), MaxCandidates)}
	}
	return Search{Method: Filtered}
}

// TermStat is a query lexeme and how many documents hold it.
type TermStat struct {
	Term string
	DF   int64
}

// Corpus is a tenant's serving-tier statistics: how many entries, and the
// sum of their lengths in distinct lexemes; and about how many entries
// every tenant has, which is what the shared vector index holds.
type Corpus struct {
	Docs    int64
	Lexemes int64
	AllDocs int64
}

// AvgLen is the mean entry length in distinct lexemes (1 when empty).
func (c Corpus) AvgLen() float64 {
	if c.Docs == 0 || c.Lexemes == 0 {
		return 1
	}
	return float64(c.Lexemes) / float64(c.Docs)
}

// IDF is BM25's smoothed inverse document frequency.
func IDF(df, n int64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// CommonShare is the document share above which a lexeme is too common to
// select candidates by: it would make the full-text leg score most of the
// corpus, and ranking costs per matching row. Such a lexeme still scores
// the candidates the rarer ones select (dropping it altogether cost 0.013
// nDCG@10 on Cranfield; docs/BENCHMARKS.md).
const CommonShare = 0.25

// Prune drops very common lexemes (held by more than CommonShare of n
// documents) from a full-text query's candidate selection, unless that
// would drop them all, in which case the rarest few stay.
func Prune(terms []TermStat, n int64) []TermStat {
	var keep []TermStat
	for _, t := range terms {
		if n < 20 || float64(t.DF) <= CommonShare*float64(n) {
			keep = append(keep, t)
		}
	}
	if len(keep) > 0 || len(terms) == 0 {
		return keep
	}
	sorted := slices.Clone(terms)
	slices.SortFunc(sorted, func(a, b TermStat) int { return cmp.Compare(a.DF, b.DF) })
	return sorted[:min(2, len(sorted))]
}

// FullTextQuery is the full-text leg's input: the tsquery that finds
// candidates (an OR of the query's rarer lexemes) and the lexemes that
// score them, each with its BM25 weight.
type FullTextQuery struct {
	TSQuery string
	Lexemes []string
	IDF     []float64
	AvgLen  float64
	// ScopeFirst says the leg should find the scope's rows first (the
	// path index) and test the lexemes on them; otherwise it finds the
	// lexemes' rows (the GIN index) and filters them by scope. Decided
	// from maintained counts (ScopeFirstRatio), not by the planner, which
	// once read a 10,000-row subtree from the path index to intersect it
	// with 120 lexeme rows.
	ScopeFirst bool
	// Generic says the leg, lexemes first, may run under one generic plan
	// kept per connection rather than be planned for its values on every
	// recall: the tenant holds at least half of all tenants' entries, so
	// the GIN index's rows for a lexeme are mostly its own and reading
	// them is the right plan whatever the values. A smaller tenant's leg
	// is planned for its values, where Postgres may instead intersect the
	// GIN index with the tenant's rows, as a generic plan cannot judge.
	Generic bool
	// ScopeInIndex says the scope's subtree is a key of the full-text
	// index's scan (migration 0043), beside the lexemes: GIN intersects
	// the scope's postings with theirs, so rows outside the scope are
	// never fetched, whether the lexemes or the scope hold fewer rows.
	// Set when the scope reaches at most 1/ScopeInIndexShare of the
	// tenant's entries (ScopeFirst is then false); over most of the tree
	// the scope's postings filter little and cost more to read than the
	// rows they would spare.
	ScopeInIndex bool
}

// ScopeSubtrees are the subtrees whose rows are both in the scope and
// under one of the allowed subtrees (id paths): each allowed subtree
// inside the scope, and the scope itself when an allowed subtree holds
// it. Their union is what the scope and allow tests let through, so the
// full-text index searches under them (ScopeInIndex), not under a scope
// wider than what the caller may read; one inside another is left out.
// None when the two do not meet.
func ScopeSubtrees(scope string, allow []string) []string {
	var in []string
	for _, a := range allow {
		switch {
		case under(a, scope):
			in = append(in, a)
		case under(scope, a):
			in = append(in, scope)
		}
	}
	// Shortest first, so that a subtree's ancestors are kept before it.
	slices.SortFunc(in, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
	var out []string
	for _, p := range in {
		if !slices.ContainsFunc(out, func(q string) bool { return under(p, q) }) {
			out = append(out, p)
		}
	}
	return out
}

// under says whether the id path p is q or below it.
func under(p, q string) bool {
	return p == q || strings.HasPrefix(p, q+".")
}

// RankBudget is about how many rows the full-text leg may visit: ranking
// costs a few microseconds per row, so a query whose lexemes are all in
// thousands of rows would blow the latency budget. Cranfield's quality is
// unchanged from 1,000 down to 300 and falls below 200; 300 rather than
// 500 saves a fifth of a wide recall at 100k entries (docs/BENCHMARKS.md).
const RankBudget = 300

// ScopeFirstRatio is how many of the scope's rows the path index yields
// for the cost of fetching and filtering one candidate row: measured at
// 100k entries, a 10,000-row scope against ~250 candidate rows took half
// the time candidates first (1.5 ms against 3.1), a 1,000-row scope a
// third less scope first (1.1 ms against 1.5).
const ScopeFirstRatio = 8

// ScopeInIndexShare is the part of the tenant's entries at or under which
// a scope is searched inside the full-text index (ScopeInIndex). Measured
// at 1M entries: a 10 % scope's leg took 1.0–2.9 ms in the index against
// 3.5–6.9 ms filtering the lexemes' rows, a 1 % scope's 0.4–0.8 ms against
// 5.5–8.6 ms scope first; the whole tree's 11–19 ms against 10. Between 10 %
// and the whole tree it was not measured: a quarter is a guess that leaves
// most of the scope's rows spared (docs/BENCHMARKS.md).
const ScopeInIndexShare = 4

// MaxScored is the most lexemes, rarest first, that select and score
// candidates: each costs a lookup in every candidate's tsvector, and a
// 2,000-byte query can hold hundreds.
const MaxScored = 32

// NewFullTextQuery chooses and weighs the query's lexemes; ok is false
// when nothing is left to search for. The rarest MaxScored lexemes score.
// The candidates, the rows the leg visits, are bounded by RankBudget. When
// the filter reaches at most that many rows, Postgres can walk them by
// path and every lexeme that is not too common (Prune) selects
// candidates. Otherwise candidates are the rows holding one of the rarest
// lexemes, added in order of document frequency while their frequencies
// sum to at most RankBudget (and at least the rarest): those rows are what
// the GIN index hands over before the path filter. Rows holding only
// commoner lexemes would rank low anyway; the vector leg still sees them.
func NewFullTextQuery(terms []TermStat, c Corpus, reach int64) (q FullTextQuery, ok bool) {
	selecting := Prune(terms, c.Docs)
	if len(selecting) == 0 {
		return FullTextQuery{}, false
	}
	byRarity := func(a, b TermStat) int { return cmp.Compare(a.DF, b.DF) }
	scoring := slices.SortedStableFunc(slices.Values(terms), byRarity)
	scoring = scoring[:min(MaxScored, len(scoring))]
	q.AvgLen = c.AvgLen()
	for _, t := range scoring {
		q.Lexemes = append(q.Lexemes, t.Term)
		q.IDF = append(q.IDF, IDF(t.DF, c.Docs))
	}
	selecting = slices.SortedStableFunc(slices.Values(selecting), byRarity)
	var candidates []string
	var visited, holding int64
	for _, t := range selecting[:min(MaxScored, len(selecting))] {
		visited += t.DF
		if reach <= RankBudget || len(candidates) == 0 || visited <= RankBudget {
			candidates = append(candidates, t.Term)
			holding += t.DF
		}
	}
	q.TSQuery = TSQuery(candidates)
	q.ScopeInIndex = ScopeInIndexShare*reach <= c.Docs
	q.ScopeFirst = !q.ScopeInIndex && reach < ScopeFirstRatio*holding
	q.Generic = !q.ScopeFirst && 2*c.Docs >= c.AllDocs
	return q, true
}

// Feedback is pseudo-relevance feedback for the vector leg: the query
// vector moves towards the full-text leg's best few entries (Rocchio) so
// the vector leg finds what those entries are about in other words.
type Feedback struct {
	// Docs is how many of the full-text leg's best entries feed back; 0
	// turns feedback off.
	Docs int
	// Weight is the pull of their centroid against the unit query vector.
	Weight float64
}

// DefaultFeedback is tuned on the Cranfield collection (docs/BENCHMARKS.md).
var DefaultFeedback = Feedback{Docs: 3, Weight: 2}

// Expand returns the query vector normalised, plus Weight times the mean
// of the normalised feedback vectors. Vectors of another length are
// ignored; without feedback the query comes back unchanged.
func (fb Feedback) Expand(query []float32, docs [][]float32) []float32 {
	out := unit(query)
	if out == nil {
		return query
	}
	used := 0
	sum := make([]float64, len(out))
	for _, d := range docs {
		u := unit(d)
		if len(u) != len(out) {
			continue
		}
		for i, x := range u {
			sum[i] += float64(x)
		}
		used++
	}
	if used == 0 {
		return query
	}
	for i := range out {
		out[i] += float32(fb.Weight * sum[i] / float64(used))
	}
	return out
}

// unit returns v scaled to length 1, or nil for a zero vector.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return nil
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// TSQuery builds an OR query of lexemes for to_tsquery('simple', …): the
// lexemes are already normalised, so no dictionary runs again. Quotes and
// backslashes are escaped.
func TSQuery(lexemes []string) string {
	parts := make([]string, 0, len(lexemes))
	for _, l := range lexemes {
		l = strings.ReplaceAll(l, `\`, `\\`)
		l = strings.ReplaceAll(l, `'`, `''`)
		parts = append(parts, "'"+l+"'")
	}
	return strings.Join(parts, " | ")
}

// Narrow intersects the scope's subtree with the caller's readable
// subtrees: allow paths under the scope stay; allow paths above it become
// the scope itself.
func Narrow(scope string, allow []string) []string {
	var out []string
	for _, a := range allow {
		switch {
		case scope == a || strings.HasPrefix(scope, a+"."):
			out = append(out, scope)
		case strings.HasPrefix(a, scope+"."):
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
