package retrieval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/domain"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres"
	"github.com/omlhub/oml/platform/pgtest"
)

// TestFullTextRanksByBM25 checks the full-text leg's order against BM25
// computed here, in Go, from each entry's term frequencies (ts_rank_cd of
// one lexeme: 0.1 an occurrence, 0.4 in the lead) and length in distinct
// lexemes:
//
//	Σ idf(t) / (1 + k1 · (1 − b + b · len / avglen) / tf(t)), k1 0.12, b 0.75
//
// over the lexemes an entry holds, in all three of the leg's forms and
// past the custom plans Postgres tries before a generic one. The SQL
// computes the length norm in another arrangement (float8 factors, one a
// parameter), so the scores may differ in their last bits: rows whose
// scores are that close may come in either order.
func TestFullTextRanksByBM25(t *testing.T) {
	ctx := context.Background()
	db := openInPlanMode(t, pgtest.NewURL(t), "auto")
	rng := rand.New(rand.NewPCG(17, 4))
	vocab := strings.Fields("boundary layer flow shock wave heat transfer plate wing pressure drag lift supersonic nozzle jet")
	var values []string
	for i := range 60 {
		words := make([]string, 3+rng.IntN(30))
		for j := range words {
			words[j] = vocab[rng.IntN(len(vocab))]
		}
		lead := vocab[rng.IntN(len(vocab))] + " " + vocab[rng.IntN(len(vocab))]
		if i%3 == 0 {
			lead = "" // no lead: every occurrence weighs 0.1
		}
		values = append(values, fmt.Sprintf("('in_%02d', %s, %s)", i, pgQuote(lead), pgQuote(strings.Join(words, " "))))
	}
	if _, err := db.Pool.Exec(ctx, `
INSERT INTO retrieval.entries (tenant_id, artifact_id, workarea_id, workarea_id_path, kind, claim_key, version, text, tsv, promoted_at)
SELECT 'ten_a', x.id, 'wa_r', 'r', 'memory', x.id, 1, x.lead || ' ' || x.body,
       setweight(to_tsvector('english', x.lead), 'B') || to_tsvector('english', x.body), now()
FROM (VALUES `+strings.Join(values, ", ")+`) AS x(id, lead, body)`); err != nil {
		t.Fatal(err)
	}
	lexemes := []string{"boundari", "shock", "nozzl", "drag"}
	n := 60.0
	var avg float64
	if err := db.Pool.QueryRow(ctx, `SELECT avg(length(tsv)) FROM retrieval.entries`).Scan(&avg); err != nil {
		t.Fatal(err)
	}
	idf := make([]float64, len(lexemes))
	for i, l := range lexemes {
		var df int64
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM retrieval.entries WHERE tsv @@ $1::tsquery`, domain.TSQuery([]string{l})).Scan(&df); err != nil {
			t.Fatal(err)
		}
		idf[i] = domain.IDF(df, int64(n))
	}
	// Expected scores, from what Postgres reports of each entry.
	want := map[string]float64{}
	rows, err := db.Pool.Query(ctx, `
SELECT artifact_id, length(tsv), array(SELECT ts_rank_cd('{0.1, 0.2, 0.4, 1.0}', tsv, l::tsquery, 0)::float8 FROM unnest($2::text[]) AS l)
FROM retrieval.entries WHERE tsv @@ $1::tsquery`, domain.TSQuery(lexemes), quoted(lexemes))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var length int
		var tf []float64
		if err := rows.Scan(&id, &length, &tf); err != nil {
			t.Fatal(err)
		}
		k := 0.12 * (0.25 + 0.75*float64(length)/avg)
		for i, f := range tf {
			if f > 0 {
				want[id] += idf[i] / (1 + k/f)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) < 20 {
		t.Fatalf("only %d entries hold a lexeme; the corpus proves little", len(want))
	}
	repo := postgres.New(db)
	base := domain.FullTextQuery{TSQuery: domain.TSQuery(lexemes), Lexemes: lexemes, IDF: idf, AvgLen: avg}
	forms := map[string]domain.FullTextQuery{
		"scope first":            func() domain.FullTextQuery { q := base; q.ScopeFirst = true; return q }(),
		"lexemes first":          base,
		"lexemes first, generic": func() domain.FullTextQuery { q := base; q.Generic = true; return q }(),
		"scope in the index":     func() domain.FullTextQuery { q := base; q.ScopeInIndex = true; return q }(),
		"scope in the index, generic": func() domain.FullTextQuery {
			q := base
			q.ScopeInIndex, q.Generic = true, true
			return q
		}(),
	}
	f := app.Filter{Scope: "r", Allow: []string{"r"}}
	for name, q := range forms {
		for round := range 7 {
			got, _, err := repo.FullText(ctx, "ten_a", q, f, 100, app.Vectors{})
			if err != nil {
				t.Fatalf("%s, round %d: %v", name, round, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s, round %d: %d rows, want %d", name, round, len(got), len(want))
			}
			seen := map[string]bool{}
			for i, id := range got {
				if seen[id] {
					t.Fatalf("%s, round %d: %s twice", name, round, id)
				}
				seen[id] = true
				if _, ok := want[id]; !ok {
					t.Fatalf("%s, round %d: %s holds none of the lexemes", name, round, id)
				}
				if i > 0 && want[id] > want[got[i-1]]+1e-9 {
					t.Fatalf("%s, round %d: %s (%.12f) after %s (%.12f)", name, round, id, want[id], got[i-1], want[got[i-1]])
				}
			}
		}
	}
}

func pgQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoted(lexemes []string) []string {
	out := make([]string, len(lexemes))
	for i, l := range lexemes {
		out[i] = domain.TSQuery([]string{l})
	}
	return out
}
