package domain

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestFuseWeightsAndTies(t *testing.T) {
	f := Fusion{K: 60, FullText: 1, Vector: 1}
	got := f.Fuse([]string{"a", "b", "c"}, []string{"b", "d"}, 10)
	ids := make([]string, len(got))
	for i, r := range got {
		ids[i] = r.ID
	}
	if want := []string{"b", "a", "d", "c"}; !slices.Equal(ids, want) {
		t.Fatalf("order %v, want %v", ids, want)
	}
	if got[0].Score > 1 || got[len(got)-1].Score <= 0 {
		t.Fatalf("scores outside (0, 1]: %v", got)
	}
	// A zero weight drops the leg entirely, not just its score.
	only := Fusion{K: 60, FullText: 0, Vector: 1}.Fuse([]string{"a"}, []string{"d"}, 10)
	if len(only) != 1 || only[0].ID != "d" || only[0].Score != 1 {
		t.Fatalf("vector-only fusion = %v", only)
	}
	if n := len(f.Fuse([]string{"a", "b", "c"}, nil, 2)); n != 2 {
		t.Fatalf("k=2 returned %d", n)
	}
}

func TestNewFullTextQueryPrunesAndWeighs(t *testing.T) {
	c := Corpus{Docs: 1000, Lexemes: 50000}
	q, ok := NewFullTextQuery([]TermStat{{"flow", 600}, {"wing", 40}, {"o'neil", 0}}, c, 1000)
	if !ok {
		t.Fatal("nothing left")
	}
	if !slices.Equal(q.Lexemes, []string{"o'neil", "wing", "flow"}) {
		t.Fatalf("lexemes %v: every lexeme scores, rarest first", q.Lexemes)
	}
	if q.TSQuery != `'o''neil' | 'wing'` {
		t.Fatalf("tsquery %q: the common lexeme should select no candidates", q.TSQuery)
	}
	if q.AvgLen != 50 || !(q.IDF[0] > q.IDF[1] && q.IDF[1] > q.IDF[2]) {
		t.Fatalf("avg len %v, idf %v: rarer lexemes weigh more", q.AvgLen, q.IDF)
	}
	// All common: the rarest select (within the budget) rather than nothing;
	// all score.
	q, ok = NewFullTextQuery([]TermStat{{"a", 900}, {"b", 500}, {"c", 700}}, c, 1000)
	if !ok || q.TSQuery != `'b'` || !slices.Equal(q.Lexemes, []string{"b", "c", "a"}) {
		t.Fatalf("all-common query: tsquery %q, lexemes %v", q.TSQuery, q.Lexemes)
	}
	// A long query scores its MaxScored rarest lexemes only.
	var many []TermStat
	for i := range 3 * MaxScored {
		many = append(many, TermStat{Term: fmt.Sprintf("t%03d", i), DF: int64(3*MaxScored - i)})
	}
	q, _ = NewFullTextQuery(many, c, 1000)
	if len(q.Lexemes) != MaxScored || q.Lexemes[0] != fmt.Sprintf("t%03d", 3*MaxScored-1) {
		t.Fatalf("long query scored %d lexemes from %s", len(q.Lexemes), q.Lexemes[0])
	}
	if _, ok := NewFullTextQuery(nil, c, 1000); ok {
		t.Fatal("a query without lexemes searched")
	}
	if (Corpus{}).AvgLen() != 1 {
		t.Fatal("empty corpus average length")
	}
}

func TestFullTextCandidatesWithinBudget(t *testing.T) {
	c := Corpus{Docs: 100_000, Lexemes: 6_000_000}
	terms := []TermStat{{"common", 20_000}, {"rare", 100}, {"mid", 150}, {"midish", 5_000}}
	// A wide filter: rare (100) and mid (+150) fit the budget (300), midish
	// (+5,000) does not; all four still score.
	for _, reach := range []int64{c.Docs, c.Docs / 10} {
		q, _ := NewFullTextQuery(terms, c, reach)
		if q.TSQuery != `'rare' | 'mid'` || len(q.Lexemes) != 4 {
			t.Fatalf("reach %d: candidates %q, scoring %v", reach, q.TSQuery, q.Lexemes)
		}
		// 250 entries hold the candidates, far fewer than the scope's
		// rows: the lexemes' entries first.
		if q.ScopeFirst {
			t.Fatalf("reach %d: scope first, but only 250 entries hold the candidates", reach)
		}
	}
	// A filter reaching fewer rows than the budget: every lexeme searches,
	// and the scope is a key of the index's scan.
	q, _ := NewFullTextQuery(terms, c, RankBudget)
	if q.TSQuery != `'rare' | 'mid' | 'midish' | 'common'` || !q.ScopeInIndex || q.ScopeFirst {
		t.Fatalf("narrow scope: candidates %q, in the index %v, scope first %v", q.TSQuery, q.ScopeInIndex, q.ScopeFirst)
	}
	// The scope goes into the index up to a quarter of the tenant's
	// entries (ScopeInIndexShare), whatever the candidates.
	for reach, want := range map[int64]bool{0: true, c.Docs / 10: true, c.Docs / 4: true, c.Docs/4 + 1: false, c.Docs: false} {
		if q, _ := NewFullTextQuery(terms, c, reach); q.ScopeInIndex != want {
			t.Errorf("reach %d of %d: in the index %v, want %v", reach, c.Docs, q.ScopeInIndex, want)
		}
	}
	// Wider, candidates held by 40,000 entries: a scope of 319,999 rows
	// comes first, one of 320,000 (ScopeFirstRatio × 40,000) does not.
	wide := Corpus{Docs: 1_000_000, Lexemes: 60_000_000}
	many := []TermStat{{"many", 40_000}}
	if q, _ := NewFullTextQuery(many, wide, 319_999); !q.ScopeFirst || q.ScopeInIndex || q.Generic {
		t.Fatalf("319,999-row scope, 40,000 candidate rows: scope first %v, in the index %v, generic %v", q.ScopeFirst, q.ScopeInIndex, q.Generic)
	}
	if q, _ := NewFullTextQuery(many, wide, 320_000); q.ScopeFirst || q.ScopeInIndex {
		t.Fatalf("320,000-row scope, 40,000 candidate rows: scope first %v, in the index %v", q.ScopeFirst, q.ScopeInIndex)
	}
	// However common, the rarest lexeme always searches.
	q, _ = NewFullTextQuery([]TermStat{{"x", 20_000}}, c, c.Docs)
	if q.TSQuery != `'x'` {
		t.Fatalf("single common lexeme: %q", q.TSQuery)
	}
}

func TestFeedbackExpand(t *testing.T) {
	fb := Feedback{Docs: 2, Weight: 2}
	got := fb.Expand([]float32{3, 4, 0}, [][]float32{{0, 0, 5}, {0, 0, 1}, {1, 2}})
	want := []float32{0.6, 0.8, 2} // unit query + 2 × mean of unit docs; the short vector is ignored
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("expand = %v, want %v", got, want)
		}
	}
	q := []float32{1, 0}
	if got := fb.Expand(q, nil); !slices.Equal(got, q) {
		t.Fatalf("no feedback changed the query: %v", got)
	}
	if got := fb.Expand([]float32{0, 0}, [][]float32{{1, 0}}); !slices.Equal(got, []float32{0, 0}) {
		t.Fatalf("zero query expanded: %v", got)
	}
}

func TestPlanFromCounts(t *testing.T) {
	over := func(n int) Search { return Search{Method: Overfetch, Candidates: n} }
	for _, c := range []struct {
		reach, index int64
		want         Search
	}{
		{10, 100_000, Search{Method: Exact}},
		{ExactThreshold, 100_000, Search{Method: Exact}},
		{10_000, 1_000_000, Search{Method: Exact}}, // 1 %: filtered HNSW loses recall there
		{5_000, 1_000_000, Search{Method: Exact}},  // a small tenant in a big shared index
		{100_000, 100_000, over(BaseCandidates)},
		{50_000, 100_000, over(91)},                   // 64 ÷ √0.5
		{10_000, 100_000, over(203)},                  // 10 %: 64 ÷ √0.1 beats 32 ÷ (2 · 0.1)
		{5_000, 100_000, over(320)},                   // 5 %: 32 ÷ (2 · 0.05)
		{1_000_000, 1_000_000, over(641)},             // 64 · 10^¾ = 360 needed, walked · 10^¼
		{300_000, 1_000_000, over(1000)},              // 64 · 10^¾ ÷ √0.3 = 658 · 10^¼ = 1,171: the ceiling
		{130_000, 1_000_000, over(1000)},              // 64 · 10^¾ ÷ √0.13 = 999
		{100_000, 1_000_000, over(1000)},              // 1,138 needed: within a quarter of the ceiling
		{83_000, 1_000_000, over(1000)},               // 1,249 needed
		{82_000, 1_000_000, Search{Method: Filtered}}, // 1,257 needed
		{50_000, 1_000_000, Search{Method: Filtered}},
		{400_000, 400_000, over(258)}, // 64 · 4^¾ = 182 needed, · 4^¼
		{1_000_000, 10, over(641)},    // a stale index count: the reach is the floor
		{0, 0, Search{Method: Exact}},
	} {
		if got := Plan(c.reach, c.index, 32); got != c.want {
			t.Errorf("Plan(%d, %d, 32) = %v, want %v", c.reach, c.index, got, c.want)
		}
	}
}

func TestNarrow(t *testing.T) {
	got := Narrow("u.a", []string{"u", "u.a.b", "u.ab", "v"})
	if !slices.Equal(got, []string{"u.a", "u.a.b"}) {
		t.Fatalf("Narrow = %v", got)
	}
}

func TestQueryValidate(t *testing.T) {
	q := Query{Text: "  wing  ", Scope: "u"}
	if err := q.Validate(); err != nil || q.K != DefaultK || q.Text != "wing" {
		t.Fatalf("validate: %v %+v", err, q)
	}
	for _, bad := range []Query{{Text: "", Scope: "u"}, {Text: "x", Scope: ""}, {Text: "x", Scope: "u", K: MaxK + 1}, {Text: "\xff", Scope: "u"}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

// The full-text leg runs under a generic plan only lexemes first and for
// a tenant holding at least half of all entries (Corpus.AllDocs).
func TestFullTextGenericOnlyForADominantTenant(t *testing.T) {
	terms := []TermStat{{"rare", 50}, {"commoner", 2000}}
	for _, c := range []struct {
		docs, all, reach int64
		want             bool
	}{
		{100_000, 100_000, 100_000, true},
		{100_000, 200_000, 100_000, true},
		{100_000, 200_001, 100_000, false}, // another tenant holds more
		{1_000, 1_000_000, 1_000, false},
		{100_000, 0, 100_000, true},   // statistics not gathered yet: its own count
		{100_000, 100_000, 300, true}, // the scope in the index: one shape whatever its value
	} {
		q, ok := NewFullTextQuery(terms, Corpus{Docs: c.docs, Lexemes: c.docs * 40, AllDocs: c.all}, c.reach)
		if !ok {
			t.Fatalf("%+v: no query", c)
		}
		if q.Generic != c.want {
			t.Errorf("docs %d of %d, reach %d: Generic %v (scope first %v), want %v", c.docs, c.all, c.reach, q.Generic, q.ScopeFirst, c.want)
		}
	}
}

func TestSubtreePlan(t *testing.T) {
	whole := func(reach int64) Search { return Plan(reach, 1_000_000, 32) }
	for _, c := range []struct {
		name           string
		reach, subRows int64
		subtree        string
		want           Search
	}{
		{"no subtree index", 100_000, 100_000, "", whole(100_000)},
		{"the whole subtree: at least MinSubtreeWalk", 100_000, 100_000, "r.a0", Search{Method: Overfetch, Candidates: MinSubtreeWalk, Subtree: "r.a0"}},
		{"a tenth of it", 10_000, 100_000, "r.a0", Search{Method: Overfetch, Candidates: 203, Subtree: "r.a0"}},
		{"few rows: exact stays", ExactThreshold, 100_000, "r.a0", Search{Method: Exact}},
		{"a sliver of a big subtree: the whole plan", 5_000, 500_000, "r.a0", whole(5_000)},
		{"an unknown count", 100_000, 0, "r.a0", whole(100_000)},
	} {
		if got := SubtreePlan(whole(c.reach), c.reach, c.subtree, c.subRows, 32); got != c.want {
			t.Errorf("%s: SubtreePlan = %v, want %v", c.name, got, c.want)
		}
	}
}

// The full-text index searches under the subtrees both the scope and an
// allowed subtree hold, the widest of nested ones only.
func TestScopeSubtrees(t *testing.T) {
	for _, c := range []struct {
		scope string
		allow []string
		want  []string
	}{
		{"r", []string{"r"}, []string{"r"}},
		{"r.a", []string{"r"}, []string{"r.a"}},                            // the scope inside what is allowed
		{"r", []string{"r.a", "r.b.c"}, []string{"r.a", "r.b.c"}},          // allowed parts of the scope
		{"r", []string{"r.a.b", "r.a", "r.a-x"}, []string{"r.a", "r.a-x"}}, // r.a.b inside r.a
		{"r.a", []string{"r.ab", "s", "r.b"}, nil},                         // a shared prefix is not a subtree
		{"r.a", []string{"r", "r.a", "r.a.b"}, []string{"r.a"}},
		{"r", nil, nil},
	} {
		if got := ScopeSubtrees(c.scope, c.allow); !slices.Equal(got, c.want) {
			t.Errorf("scope %s, allow %v: %v, want %v", c.scope, c.allow, got, c.want)
		}
	}
}
