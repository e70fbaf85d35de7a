package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// BenchmarkSearch measures search (GET /v1/search, the same service as
// the MCP tool) over SEARCH_ROWS mixed rows (default 100,000: 40 % feed
// events, 40 % promoted knowledge-base pages, 20 % entries of the
// searcher's own session brains) spread evenly over the 100 leaves of a
// two-level tree, at three scope widths: the whole tree, one of its ten
// subtrees (10 %) and one leaf (1 %). Each row is 30 words drawn from a
// skewed 2,000-word vocabulary; the query is two mid-frequency words:
//
//	go test -run '^$' -bench Search -benchtime 500x -count 3 ./cmd/oml-server
func BenchmarkSearch(b *testing.B) {
	e := setupBench(b)
	rows := 100_000
	if v, err := strconv.Atoi(os.Getenv("SEARCH_ROWS")); err == nil && v > 0 {
		rows = v
	}
	key := e.searchCorpus(b, rows)
	for _, c := range []int{1, 8} {
		// The baseline: a bare handler doing SELECT 1 on the same pool.
		b.Run(fmt.Sprintf("target=select1/c=%d", c), func(b *testing.B) {
			e.load(b, loadSpec{Target: "select1", Concurrency: c, Warmup: 50})
		})
	}
	for _, w := range []struct{ name, scope, query string }{
		{"search-100%", "", ""}, {"search-10%", "universe.s.c3", ""}, {"search-1%", "universe.s.c3.g4", ""},
		// A word in about half the rows: each leg ranks its first 5,000
		// matches.
		{"search-common-100%", "", "alpha0"}, {"search-common-1%", "universe.s.c3.g4", "alpha0"},
	} {
		for _, c := range []int{1, 8} {
			b.Run(fmt.Sprintf("target=%s/c=%d", w.name, c), func(b *testing.B) {
				e.load(b, loadSpec{Target: "search_http", Concurrency: c, Warmup: 50, SearchKey: key, Scope: w.scope, Query: w.query})
			})
		}
	}
}

// searchCorpus builds the tree, a searcher key (reader and writer on
// universe.s) with one session per leaf, and the rows; it returns the
// searcher's token. It runs once per process.
func (e *benchEnv) searchCorpus(b *testing.B, rows int) string {
	if e.searchKey != "" {
		return e.searchKey
	}
	ctx := context.Background()
	admin := e.adminKey
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(e.callAs(admin, "POST", "/v1/workareas", `{"parent":"universe","name":"s"}`, nil))
	for i := range 10 {
		must(e.callAs(admin, "POST", "/v1/workareas", fmt.Sprintf(`{"parent":"universe.s","name":"c%d"}`, i), nil))
		for j := range 10 {
			must(e.callAs(admin, "POST", "/v1/workareas", fmt.Sprintf(`{"parent":"universe.s.c%d","name":"g%d"}`, i, j), nil))
		}
	}
	var issued struct {
		KeyID string `json:"key_id"`
		Token string `json:"token"`
	}
	must(e.callAs(admin, "POST", "/v1/keys", `{"principal":"bench-searcher","role":"writer"}`, &issued))
	for _, scope := range []string{"reader", "writer"} {
		must(e.callAs(admin, "POST", "/v1/grants", fmt.Sprintf(`{"key_id":%q,"workarea":"universe.s","scope":%q,"effect":"allow"}`, issued.KeyID, scope), nil))
	}
	type leaf struct{ id, idPath, session string }
	var leaves []leaf
	r, err := e.db.Pool.Query(ctx, `SELECT id, id_path::text FROM access.workareas WHERE path ~ '^universe\.s\.c[0-9]\.g[0-9]$' ORDER BY path`)
	must(err)
	for r.Next() {
		var l leaf
		must(r.Scan(&l.id, &l.idPath))
		leaves = append(leaves, l)
	}
	must(r.Err())
	if len(leaves) != 100 {
		b.Fatalf("%d leaves", len(leaves))
	}
	saved := e.key
	e.key = issued.Token
	for i := range leaves {
		leaves[i].session = e.startSessionIn(b, leaves[i].id, "search")
	}
	e.key = saved
	var tenant string
	must(e.db.Pool.QueryRow(ctx, `SELECT tenant_id FROM access.workareas WHERE id = $1`, leaves[0].id).Scan(&tenant))
	ids, paths, sessions := make([]string, 100), make([]string, 100), make([]string, 100)
	for i, l := range leaves {
		ids[i], paths[i], sessions[i] = l.id, l.idPath, l.session
	}
	// Row i lives in leaf i % 100; its text is 30 words alpha<k>, k drawn
	// with density rising toward 0 (k = 2000·u²).
	const words = `(SELECT string_agg('alpha' || floor(2000 * random() ^ 2)::int, ' ') FROM generate_series(1, 30 + 0 * g))`
	events, pages := rows*2/5, rows*2/5
	brains := rows - events - pages
	_, err = e.db.Pool.Exec(ctx, `
INSERT INTO retrieval.search_rows (tenant_id, corpus, row_id, workarea_id, workarea_id_path, title, body, tsv, actor, at)
SELECT $1, 'event', 'evt_bench_' || g, ($2::text[])[1 + g % 100], (($3::text[])[1 + g % 100])::ltree, 'signal', t.body,
       retrieval.entry_tsv('english', t.body), 'bench', now()
FROM generate_series(0, $4 - 1) g, LATERAL (SELECT `+words+` AS body) t`, tenant, ids, paths, events)
	must(err)
	_, err = e.db.Pool.Exec(ctx, `
INSERT INTO retrieval.entries (tenant_id, artifact_id, workarea_id, workarea_id_path, kind, claim_key, version, text, tsv, promoted_at)
SELECT $1, 'art_bench_' || g, ($2::text[])[1 + g % 100], (($3::text[])[1 + g % 100])::ltree, 'page', '/fs/p' || g, 1, t.body,
       retrieval.entry_tsv('english', t.body), now()
FROM generate_series(0, $4 - 1) g, LATERAL (SELECT `+words+` AS body) t`, tenant, ids, paths, pages)
	must(err)
	_, err = e.db.Pool.Exec(ctx, `
INSERT INTO retrieval.search_rows (tenant_id, corpus, row_id, workarea_id, workarea_id_path, session_id, title, body, tsv, actor, at)
SELECT $1, 'brain', ($4::text[])[1 + g % 100] || ':/kv/b' || g, ($2::text[])[1 + g % 100], (($3::text[])[1 + g % 100])::ltree,
       ($4::text[])[1 + g % 100], '/kv/b' || g, t.body, retrieval.entry_tsv('english', t.body), 'bench', now()
FROM generate_series(0, $5 - 1) g, LATERAL (SELECT `+words+` AS body) t`, tenant, ids, paths, sessions, brains)
	must(err)
	_, err = e.db.Pool.Exec(ctx, `ANALYZE retrieval.search_rows; ANALYZE retrieval.entries`)
	must(err)
	e.searchKey = issued.Token
	return e.searchKey
}

// searchQuery is what the search target asks: two mid-frequency words.
const searchQuery = "alpha150 alpha400"
