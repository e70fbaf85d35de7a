package retrieval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/embed"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/scope"
)

// The synthetic corpus the recall benchmark and the exact-vs-HNSW test
// load. Words are pronounceable nonsense with a Zipf distribution (so a
// few lexemes are in most entries, as in real text, and the full-text leg
// has to prune them); each entry also draws most of its words from one of
// a few hundred topics, so vectors cluster as real embeddings do.
//
// Entries spread over a four-level tree of 1,111 workareas: the root r
// (100 % of the rows), ten children r.aN (10 % each), a hundred r.aN.bM
// (1 %) and a thousand leaves r.aN.bM.cK (0.1 %), which hold the rows.
const (
	vocabSize  = 20000
	topicCount = 300
	topicWords = 40
	benchTen   = "ten_bench"
)

type corpus struct {
	vocab  []string
	zipf   *rand.Zipf
	topics [][]string
	rng    *rand.Rand
}

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := &corpus{rng: rng, zipf: rand.NewZipf(rng, 1.07, 2, vocabSize-1)}
	seen := map[string]bool{}
	consonants, vowels := "bdfgklmnprstvz", "aeiou"
	for len(c.vocab) < vocabSize {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteByte(consonants[rng.IntN(len(consonants))])
			b.WriteByte(vowels[rng.IntN(len(vowels))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			c.vocab = append(c.vocab, w)
		}
	}
	for range topicCount {
		t := make([]string, topicWords)
		for i := range t {
			t[i] = c.vocab[200+rng.IntN(vocabSize-200)] // topics avoid the commonest words
		}
		c.topics = append(c.topics, t)
	}
	return c
}

// text is one entry: 40–80 words, 60 % from one topic, the rest Zipf.
func (c *corpus) text() string {
	topic := c.topics[c.rng.IntN(len(c.topics))]
	n := 40 + c.rng.IntN(41)
	words := make([]string, n)
	for i := range words {
		if c.rng.Float64() < 0.6 {
			words[i] = topic[c.rng.IntN(len(topic))]
		} else {
			words[i] = c.vocab[c.zipf.Uint64()]
		}
	}
	return strings.Join(words, " ")
}

// query picks six words of an entry's text, so every query has answers.
func (c *corpus) query(text string) string {
	words := strings.Fields(text)
	out := make([]string, 6)
	for i := range out {
		out[i] = words[c.rng.IntN(len(words))]
	}
	return strings.Join(out, " ")
}

// leaf is the id path of leaf i (0–999).
func leaf(i int) string { return fmt.Sprintf("r.a%d.b%d.c%d", i/100, i/10%10, i%10) }

// scopeAt returns the id path of the node at a width (1, 0.1, 0.01 or
// 0.001 of the rows) holding leaf i.
func scopeAt(width float64, i int) string {
	switch {
	case width >= 1:
		return "r"
	case width >= 0.1:
		return fmt.Sprintf("r.a%d", i/100)
	case width >= 0.01:
		return fmt.Sprintf("r.a%d.b%d", i/100, i/10%10)
	}
	return leaf(i)
}

type loaded struct {
	texts  []string
	leaves []int
}

// resume reads back the entries an earlier run left in a reused
// database, in load order.
func (l *loaded) resume(ctx context.Context, tb testing.TB, db *pg.DB) {
	tb.Helper()
	rows, err := db.Pool.Query(ctx, `SELECT text, workarea_id_path::text FROM retrieval.entries WHERE tenant_id = $1 ORDER BY artifact_id`, benchTen)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var text, path string
		var a, b, c int
		if err := rows.Scan(&text, &path); err != nil {
			tb.Fatal(err)
		}
		if _, err := fmt.Sscanf(path, "r.a%d.b%d.c%d", &a, &b, &c); err != nil {
			tb.Fatalf("entry under %q: %v", path, err)
		}
		l.texts, l.leaves = append(l.texts, text), append(l.leaves, a*100+b*10+c)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
}

// load writes entries [len(l.texts), n) through the serving tier's
// adapter, in transactions of 500, embedding them with the built-in
// embedder as admission's submission would.
func (l *loaded) load(ctx context.Context, tb testing.TB, db *pg.DB, c *corpus, n int) {
	tb.Helper()
	repo := postgres.New(db)
	emb := embed.NewBuiltin(embed.DefaultDim)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for start := len(l.texts); start < n; start += 500 {
		end := min(start+500, n)
		var texts []string
		for range end - start {
			texts = append(texts, c.text())
		}
		vecs, err := emb.Embed(ctx, embed.Document, texts, nil)
		if err != nil {
			tb.Fatal(err)
		}
		err = db.InTx(ctx, func(ctx context.Context) error {
			for i, text := range texts {
				id, lf := start+i, c.rng.IntN(1000)
				e := app.Entry{
					TenantID: benchTen, ArtifactID: fmt.Sprintf("art_%08d", id), WorkareaID: "wa_" + leaf(lf), WorkareaIDPath: leaf(lf),
					Kind: "memory", ClaimKey: fmt.Sprintf("k%d", id), Version: 1, Text: text, PromotedAt: at.Add(time.Duration(id) * time.Second),
					Embedding: vecs[i], Model: emb.Model(),
				}
				if err := repo.Index(ctx, e); err != nil {
					return err
				}
				l.texts, l.leaves = append(l.texts, text), append(l.leaves, lf)
			}
			return nil
		})
		if err != nil {
			tb.Fatalf("load entries %d–%d: %v", start, end, err)
		}
	}
}

// treeAccess is the access port for the synthetic tree: the caller reads
// everything under r; a reference is its own id path.
type treeAccess struct{}

func (treeAccess) Workarea(_ context.Context, ref string) (app.Workarea, error) {
	return app.Workarea{ID: "wa_" + ref, IDPath: ref, Reader: true}, nil
}

func (treeAccess) Subtrees(context.Context, scope.Scope) (app.Subtrees, error) {
	return app.Subtrees{Allow: []string{"r"}}, nil
}

func (treeAccess) Paths(_ context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		out[id] = strings.TrimPrefix(id, "wa_")
	}
	return out, nil
}

func (treeAccess) AdministersTenant(context.Context) error { return nil }

// Fence is empty (a key in no simulation's audience), or RECALL_FENCE's
// one simulation: the recall benchmark measures the fence's predicate
// both ways.
func (treeAccess) Fence(context.Context) (scope.Fence, error) {
	if f := os.Getenv("RECALL_FENCE"); f != "" {
		return scope.Fence{f}, nil
	}
	return nil, nil
}

// benchCaller is the reader the recall benchmark and test recall as.
func benchCaller(ctx context.Context) context.Context {
	return auth.With(ctx, auth.Caller{TenantID: benchTen, KeyID: "key_bench", PrincipalID: "prn_bench", Principal: "bench", Role: "agent"})
}
