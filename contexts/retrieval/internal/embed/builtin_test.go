package embed

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
)

func embedOne(t *testing.T, e Embedder, role Role, text string, weights map[string]float32) []float32 {
	t.Helper()
	vecs, err := e.Embed(context.Background(), role, []string{text}, weights)
	if err != nil {
		t.Fatalf("Embed(%q): %v", text, err)
	}
	if len(vecs) != 1 || len(vecs[0]) != e.Dim() {
		t.Fatalf("Embed(%q) returned %d vectors, want 1 of length %d", text, len(vecs), e.Dim())
	}
	return vecs[0]
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestBuiltinModelAndDim(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		dim   int
		want  int
		model string
	}{
		{"default", 0, 384, "oml-builtin-v2-384"},
		{"negative means default", -1, 384, "oml-builtin-v2-384"},
		{"small", 16, 16, "oml-builtin-v2-16"},
		{"large", 1536, 1536, "oml-builtin-v2-1536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := NewBuiltin(tt.dim)
			if b.Dim() != tt.want || b.Model() != tt.model {
				t.Fatalf("NewBuiltin(%d): Dim %d Model %q, want %d %q", tt.dim, b.Dim(), b.Model(), tt.want, tt.model)
			}
			embedOne(t, b, Document, "shock waves in hypersonic flow", nil) // checks the length
		})
	}
}

func TestBuiltinDeterministic(t *testing.T) {
	t.Parallel()
	texts := []string{
		"experimental investigation of the aerodynamics of a wing in a slipstream",
		"simple shear flow past a flat plate in an incompressible fluid of small viscosity",
		strings.Repeat("boundary layer transition on swept wings ", 40),
	}
	weights := map[string]float32{"wing": 2.5, "flow": 0.3}
	for _, role := range []Role{Document, Query} {
		t.Run(role.String(), func(t *testing.T) {
			t.Parallel()
			want, err := NewBuiltin(0).Embed(context.Background(), role, texts, weights)
			if err != nil {
				t.Fatal(err)
			}
			// Fresh embedders, concurrent calls: the same bits every time.
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					got, err := NewBuiltin(0).Embed(context.Background(), role, texts, weights)
					if err != nil {
						t.Error(err)
						return
					}
					for i := range want {
						if !slices.Equal(got[i], want[i]) {
							t.Errorf("text %d: vectors differ between calls", i)
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

func TestBuiltinUnitNorm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		role    Role
		text    string
		weights map[string]float32
	}{
		{"one word", Document, "airfoil", nil},
		{"sentence", Document, "the pressure distribution on a cone at incidence", nil},
		{"repeated word", Document, strings.Repeat("flutter ", 1000), nil},
		{"non-ASCII", Document, "Überschallströmung über einen Keil", nil},
		{"weighted query", Query, "heat transfer in hypersonic flow", map[string]float32{"heat": 3, "flow": 0.1}},
		{"query with zero and NaN weights", Query, "heat transfer flow", map[string]float32{"heat": float32(math.NaN()), "flow": 1, "transfer": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := embedOne(t, NewBuiltin(0), tt.role, tt.text, tt.weights)
			if n := norm(v); math.Abs(n-1) > 1e-5 {
				t.Fatalf("norm = %v, want 1", n)
			}
		})
	}
}

func TestBuiltinZeroVector(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		role    Role
		text    string
		weights map[string]float32
	}{
		{"empty", Document, "", nil},
		{"stopwords only", Document, "What is it that they have been doing to the", nil},
		{"punctuation only", Document, "... --- ?! () / 1 2 3", nil},
		{"stopword query", Query, "what is the", map[string]float32{"flow": 1}},
		{"query whose terms weigh nothing", Query, "flow flow", map[string]float32{"flow": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for i, x := range embedOne(t, NewBuiltin(0), tt.role, tt.text, tt.weights) {
				if x != 0 {
					t.Fatalf("component %d = %v, want the zero vector", i, x)
				}
			}
		})
	}
}

func TestBuiltinSimilarity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		anchor, near, far string
	}{
		{
			"shared topic",
			"heat transfer to a blunt body in hypersonic flow",
			"hypersonic heat transfer measurements on blunt bodies",
			"buckling of thin cylindrical shells under axial compression",
		},
		{
			"morphology via stems and trigrams",
			"the buckling of cylinders",
			"cylindrical shells buckle",
			"laminar boundary layers on flat plates",
		},
		{
			"word order via bigrams",
			"boundary layer separation",
			"separation of the boundary layer",
			"layer boundary",
		},
	}
	b := NewBuiltin(0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := embedOne(t, b, Document, tt.anchor, nil)
			near := dot(a, embedOne(t, b, Document, tt.near, nil))
			far := dot(a, embedOne(t, b, Document, tt.far, nil))
			if near <= far {
				t.Fatalf("cos(anchor, near) = %.3f ≤ cos(anchor, far) = %.3f", near, far)
			}
		})
	}
}

// TestBuiltinQueryWeighting checks that rarity weights steer a query: two
// documents each share one word with the query, and the document sharing the
// rarer word must win.
func TestBuiltinQueryWeighting(t *testing.T) {
	t.Parallel()
	const (
		query = "flutter of panels in supersonic flow"
		docA  = "panel flutter analysis"        // shares flutter and panel
		docB  = "supersonic flow around a cone" // shares supersonic and flow
	)
	tests := []struct {
		name    string
		weights map[string]float32
		wantA   bool
	}{
		{"flutter and panel rare", map[string]float32{"flutter": 6, "panel": 5, "supersonic": 0.5, "flow": 0.1}, true},
		{"supersonic and flow rare", map[string]float32{"flutter": 0.1, "panel": 0.2, "supersonic": 6, "flow": 5}, false},
	}
	b := NewBuiltin(0)
	a := embedOne(t, b, Document, docA, nil)
	bb := embedOne(t, b, Document, docB, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := embedOne(t, b, Query, query, tt.weights)
			sa, sb := dot(q, a), dot(q, bb)
			if (sa > sb) != tt.wantA {
				t.Fatalf("score(A) = %.3f, score(B) = %.3f, want A first: %v", sa, sb, tt.wantA)
			}
		})
	}
}

func TestBuiltinWeights(t *testing.T) {
	t.Parallel()
	b := NewBuiltin(0)
	const text = "flutter of panels near xylophones"
	tests := []struct {
		name    string
		role    Role
		weights map[string]float32
		same    map[string]float32 // weights giving the same vector
	}{
		{"documents ignore weights", Document, map[string]float32{"flutter": 9}, nil},
		{"missing term takes the largest present weight", Query,
			map[string]float32{"flutter": 4, "panel": 1},
			map[string]float32{"flutter": 4, "panel": 1, "xylophon": 4}},
		{"no term present means unweighted", Query, map[string]float32{"other": 3}, nil},
		{"negative weight counts as zero", Query,
			map[string]float32{"flutter": -1, "panel": 1, "xylophon": 1},
			map[string]float32{"flutter": 0, "panel": 1, "xylophon": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := embedOne(t, b, tt.role, text, tt.weights)
			want := embedOne(t, b, tt.role, text, tt.same)
			if !slices.Equal(got, want) {
				t.Fatalf("vectors differ")
			}
		})
	}
}

func TestBuiltinErrors(t *testing.T) {
	t.Parallel()
	b := NewBuiltin(0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Embed(ctx, Document, []string{"wing"}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
	if _, err := b.Embed(context.Background(), Role(7), []string{"wing"}, nil); err == nil {
		t.Error("unknown role: want an error")
	}
	got, err := b.Embed(context.Background(), Query, nil, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("no texts: got %d vectors, err %v; want none, nil", len(got), err)
	}
}

func TestLeadEnd(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", maxLeadRunes) + ". rest"
	longest := strings.Repeat("é", maxLeadRunes-1) + ". rest"
	tests := []struct {
		name, text, lead string
	}{
		{"first sentence", "Wing flutter. The wing flutters at speed.", "Wing flutter."},
		{"question and exclamation", "Why? Because! Then.", "Why?"},
		{"end of line", "Heat transfer.\nMeasured at mach 6.", "Heat transfer."},
		{"tab", "Heat transfer.\tMeasured.", "Heat transfer."},
		{"CRLF", "Heat transfer.\r\nMeasured.", "Heat transfer."},
		{"vertical tab", "Heat transfer.\vMeasured.", "Heat transfer."},
		{"a no-break space ends no sentence", "Gist.\u00a0More words.", ""},
		{"a no-break space is text after the lead", "Gist. \u00a0", "Gist."},
		{"a dot inside a word is no end", "v1.2 ships today. Upgrade soon.", "v1.2 ships today."},
		{"one sentence has no lead", "Only one sentence.", ""},
		{"white space after the only sentence", "Only one sentence. \n ", ""},
		{"no sentence end", "no end at all", ""},
		{"more than the lead's limit", long, ""},
		{"the limit counts characters, not bytes", longest, strings.Repeat("é", maxLeadRunes-1) + "."},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.text[:LeadEnd(tt.text)]; got != tt.lead {
				t.Fatalf("lead of %q = %q, want %q", tt.text, got, tt.lead)
			}
		})
	}
}

// TestBuiltinLeadWeighs checks that a document whose lead holds the query's
// word is nearer the query than one holding the same word later.
func TestBuiltinLeadWeighs(t *testing.T) {
	t.Parallel()
	b := NewBuiltin(0)
	q := embedOne(t, b, Query, "flutter", nil)
	inLead := embedOne(t, b, Document, "Panel flutter at supersonic speed. Tests of thin plates in a wind tunnel.", nil)
	later := embedOne(t, b, Document, "Tests of thin plates in a wind tunnel. Panel flutter at supersonic speed.", nil)
	if a, c := dot(q, inLead), dot(q, later); a <= c {
		t.Fatalf("cos(query, word in the lead) = %.3f ≤ cos(query, word later) = %.3f", a, c)
	}
	// A query has no lead: the order of its sentences does not matter.
	q1 := embedOne(t, b, Query, "Panel flutter. Thin plates.", nil)
	q2 := embedOne(t, b, Query, "Thin plates. Panel flutter.", nil)
	if d := dot(q1, q2); d < 0.9 {
		t.Fatalf("queries with their sentences swapped differ: cos %.3f", d)
	}
}
