//go:build eval

package embed

import "testing"

// TestBuiltinCranfieldSanity (make eval, which builds with -tags eval and
// has the collection) ranks the first 200 Cranfield documents for the
// queries with a relevant document among them; the full evaluation (with
// Postgres full-text fusion) runs elsewhere, BenchmarkCranfield gives the
// vector leg alone on all 1,400.
func TestBuiltinCranfieldSanity(t *testing.T) {
	t.Parallel()
	c := loadCranfield(t)
	ndcg, queries := ndcgAt10(t, c, NewBuiltin(0), 200)
	t.Logf("nDCG@10 = %.3f over %d queries, 200 documents", ndcg, queries)
	if queries < 30 {
		t.Fatalf("only %d queries judged on the first 200 documents", queries)
	}
	if ndcg < 0.38 {
		t.Fatalf("nDCG@10 = %.3f, want ≥ 0.38", ndcg)
	}
}
