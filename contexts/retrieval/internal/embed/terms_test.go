package embed

import (
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"stems", "running", []string{"run"}},
		{"drops stopwords", "The wings of the aircraft were running", []string{"wing", "aircraft", "run"}},
		{"distinct in first-seen order", "flow, flows and flowing flow", []string{"flow"}},
		{"splits on punctuation", "boundary-layer/control", []string{"boundari", "layer", "control"}},
		{"lowercases", "HYPERSONIC Flow", []string{"hyperson", "flow"}},
		{"drops one-rune tokens", "x = 2.5 m", nil},
		{"keeps numbers", "Mach 25 at 1958", []string{"mach", "25", "1958"}},
		{"unicode letters", "Über die Straße", []string{"über", "die", "straße"}},
		{"stopwords only", "what is the of and", nil},
		{"empty", "", nil},
		{"punctuation only", "... --- !!!", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Terms(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("Terms(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestIDF(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		df, n  int64
		lo, hi float32
	}{
		{"unseen term in empty corpus", 0, 0, 0.69, 0.70},
		{"rare term", 1, 1000, 6.50, 6.51},
		{"term in every document", 1000, 1000, 0, 0.001},
		{"df above n is clamped", 2000, 1000, 0, 0.001},
		{"negative df is clamped", -5, 1000, 7.6, 7.7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := IDF(tt.df, tt.n)
			if got < tt.lo || got > tt.hi || got < 0 {
				t.Errorf("IDF(%d, %d) = %v, want in [%v, %v]", tt.df, tt.n, got, tt.lo, tt.hi)
			}
		})
	}
	t.Run("falls as df grows", func(t *testing.T) {
		t.Parallel()
		prev := IDF(0, 100)
		for df := int64(1); df <= 100; df++ {
			cur := IDF(df, 100)
			if cur > prev {
				t.Fatalf("IDF(%d, 100) = %v > IDF(%d, 100) = %v", df, cur, df-1, prev)
			}
			prev = cur
		}
	})
}
