package retrieval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/embed"
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

// load writes entries [len(l.texts), n) in bulk, as a restore would: the
// texts embedded with the built-in embedder on every core, then COPY into
// a temporary table and one INSERT … SELECT per 10,000 entries, which
// parses each text with retrieval.entry_tsv as promotion does. The table's
// full-text and path indexes are dropped for the load and rebuilt once
// from their own definitions; the lexeme frequencies, the corpus row and
// the per-workarea counts are then recomputed from the entries, so they
// are exact whatever an interrupted earlier load left. The HNSW index is
// the caller's (buildVectorIndex). The draws differ from the earlier
// adapter-by-adapter load's (batches of 10,000 rather than 500 share one
// generator), so its corpus is not the one the tables before 2026-12-02
// measured.
func (l *loaded) load(ctx context.Context, tb testing.TB, db *pg.DB, c *corpus, n int) {
	tb.Helper()
	const batch = 10000
	emb := embed.NewBuiltin(embed.DefaultDim)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Rebuilt however the load ends, so a kept database keeps its indexes.
	defer withoutIndexes(ctx, tb, db, "entries_tsv_scope", "entries_path", "entries_scope_builtin_384")()
	for start := len(l.texts); start < n; start += batch {
		end := min(start+batch, n)
		texts := make([]string, 0, end-start)
		for range end - start {
			texts = append(texts, c.text())
		}
		vecs := embedAll(ctx, tb, emb, texts)
		rows := make([][]any, len(texts))
		for i, text := range texts {
			id, lf := start+i, c.rng.IntN(1000)
			rows[i] = []any{fmt.Sprintf("art_%08d", id), "wa_" + leaf(lf), leaf(lf), fmt.Sprintf("k%d", id), text,
				pgvector.NewHalfVector(vecs[i]), at.Add(time.Duration(id) * time.Second)}
			l.leaves = append(l.leaves, lf)
		}
		l.texts = append(l.texts, texts...)
		err := pgx.BeginFunc(ctx, db.Pool, func(conn pgx.Tx) error {
			if _, err := conn.Exec(ctx, `CREATE TEMP TABLE load_entries (artifact_id text, workarea_id text, path text, claim_key text,
    text text, embedding halfvec, promoted_at timestamptz) ON COMMIT DROP`); err != nil {
				return err
			}
			cols := []string{"artifact_id", "workarea_id", "path", "claim_key", "text", "embedding", "promoted_at"}
			if _, err := conn.CopyFrom(ctx, pgx.Identifier{"load_entries"}, cols, pgx.CopyFromRows(rows)); err != nil {
				return fmt.Errorf("copy: %w", err)
			}
			_, err := conn.Exec(ctx, `INSERT INTO retrieval.entries (tenant_id, artifact_id, workarea_id, workarea_id_path, kind, claim_key,
    version, text, tsv, embedding, embedding_model, promoted_at)
SELECT $1, artifact_id, workarea_id, path::ltree, 'memory', claim_key, 1, text, retrieval.entry_tsv('english', text),
       embedding, $2, promoted_at
FROM load_entries`, benchTen, emb.Model())
			return err
		})
		if err != nil {
			tb.Fatalf("load entries %d–%d: %v", start, end, err)
		}
	}
	// The statistics promotion maintains one entry at a time, recomputed.
	err := db.InTx(ctx, func(ctx context.Context) error {
		conn := db.Conn(ctx)
		for _, sql := range []string{
			`DELETE FROM retrieval.term_df WHERE tenant_id = $1`,
			`INSERT INTO retrieval.term_df (tenant_id, term, df)
SELECT $1, t.term, count(*) FROM retrieval.entries e, unnest(tsvector_to_array(e.tsv)) AS t(term)
WHERE e.tenant_id = $1 GROUP BY t.term`,
			`INSERT INTO retrieval.corpus (tenant_id, docs, lexemes)
SELECT $1, count(*), coalesce(sum(length(tsv)), 0) FROM retrieval.entries WHERE tenant_id = $1
ON CONFLICT (tenant_id) DO UPDATE SET docs = EXCLUDED.docs, lexemes = EXCLUDED.lexemes`,
			`DELETE FROM retrieval.workarea_counts WHERE tenant_id = $1`,
			`INSERT INTO retrieval.workarea_counts (tenant_id, workarea_id, id_path, n)
SELECT $1, workarea_id, workarea_id_path, count(*) FROM retrieval.entries WHERE tenant_id = $1 GROUP BY workarea_id, workarea_id_path`,
		} {
			if _, err := conn.Exec(ctx, sql, benchTen); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("recompute the corpus statistics: %v", err)
	}
}

// embedAll embeds documents with one worker per core, in order.
func embedAll(ctx context.Context, tb testing.TB, emb *embed.Builtin, texts []string) [][]float32 {
	tb.Helper()
	out := make([][]float32, len(texts))
	workers := runtime.GOMAXPROCS(0)
	per := (len(texts) + workers - 1) / workers
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		lo, hi := min(w*per, len(texts)), min((w+1)*per, len(texts))
		wg.Go(func() {
			vecs, err := emb.Embed(ctx, embed.Document, texts[lo:hi], nil)
			copy(out[lo:hi], vecs)
			errs[w] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// withoutIndexes drops the named indexes of retrieval.entries and returns
// a function that builds them again from their own definitions.
func withoutIndexes(ctx context.Context, tb testing.TB, db *pg.DB, names ...string) func() {
	tb.Helper()
	var defs []string
	for _, name := range names {
		var def string
		err := db.Pool.QueryRow(ctx, `SELECT pg_get_indexdef(to_regclass('retrieval.' || $1))`, name).Scan(&def)
		if err != nil || def == "" {
			tb.Fatalf("definition of index %s: %v", name, err)
		}
		var opts []string
		err = db.Pool.QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = to_regclass('retrieval.' || $1)`, name).Scan(&opts)
		if err != nil {
			tb.Fatal(err)
		}
		if len(opts) > 0 && !strings.Contains(def, " WITH (") {
			def += " WITH (" + strings.Join(opts, ", ") + ")"
		}
		if _, err := db.Pool.Exec(ctx, `DROP INDEX retrieval.`+name); err != nil {
			tb.Fatal(err)
		}
		defs = append(defs, def)
	}
	return func() {
		for _, def := range defs {
			if _, err := db.Pool.Exec(ctx, `SET maintenance_work_mem = '1GB'; `+def+`; RESET maintenance_work_mem`); err != nil {
				tb.Fatalf("rebuild %s: %v", def, err)
			}
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
