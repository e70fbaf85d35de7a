package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/domain"
	"github.com/omlhub/oml/contexts/retrieval/internal/embed"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres"
	"github.com/omlhub/oml/platform/config"
	"github.com/omlhub/oml/platform/cpustat"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
	pgvector "github.com/pgvector/pgvector-go"
)

// widths are the scope widths measured, as shares of the rows.
var widths = []float64{1, 0.1, 0.01, 0.001}

// recallSample is how many queries per width the benchmark measures
// vector recall@10 on. At 50 one query's ten slots are 2 % of the sample
// and runs moved by ±0.01 between samples (1M, a 10 % scope: 0.948 on
// 50 queries, 0.958 on 200); 200 halves that spread.
const recallSample = 200

// newBenchService is recall as oml-server wires it, its gate sized as
// OML_RECALL_CONCURRENCY says (its default unless set).
func newBenchService(db *pg.DB) *app.Service {
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		panic(err)
	}
	return app.New(app.Deps{
		Repo: postgres.New(db), Access: treeAccess{}, Embedder: adapter{embed.NewBuiltin(embed.DefaultDim)}, Tx: db,
		Fusion: domain.DefaultFusion, Feedback: domain.DefaultFeedback, Gate: recallGate(cfg.RecallConcurrency),
	})
}

// vectorRecall runs queries' vector legs as recall would — the query
// vector moved by the full-text leg's feedback, the planned search, the
// fallback after a short overfetch — and as an exact scan, and returns
// recall@10 (hits within the exact 10th distance) and the plan used. With
// raw set the query vector goes without feedback: the harder case, for
// comparison. A non-nil force replaces the plan.
func vectorRecall(ctx context.Context, tb testing.TB, db *pg.DB, queries []string, scopes []string, raw bool, force *domain.Search) (float64, domain.Search) {
	tb.Helper()
	repo := postgres.New(db)
	svc := newBenchService(db)
	emb := adapter{embed.NewBuiltin(embed.DefaultDim)}
	var sum float64
	var plan domain.Search
	for i, q := range queries {
		// No transaction around the legs: a recall runs each as its own
		// statement (Service.Recall), and so does this.
		err := func(ctx context.Context) error {
			terms, corpus, err := repo.QueryTerms(ctx, benchTen, q)
			if err != nil {
				return err
			}
			f := app.Filter{Scope: scopes[i], Allow: []string{scopes[i]}}
			reach, err := repo.Reachable(ctx, benchTen, f)
			if err != nil {
				return err
			}
			depth := domain.LegDepth(10)
			leg := app.Leg{Query: domain.Query{Text: q, Scope: scopes[i], K: 10}, Terms: terms, Corpus: corpus, Reach: reach, Filter: f}
			if ftq, ok := domain.NewFullTextQuery(terms, corpus, reach); ok && !raw {
				if leg.FullText, _, err = repo.FullText(ctx, benchTen, ftq, f, depth, app.Vectors{}); err != nil {
					return err
				}
			}
			served, err := svc.VectorLeg(ctx, benchTen, leg)
			if err != nil {
				return err
			}
			got, vec := served.IDs, served.Vector
			plan = served.Plan
			if force != nil {
				plan = *force
				if got, err = repo.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vec, f, depth, plan); err != nil {
					return err
				}
			}
			want, err := repo.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vec, f, depth, domain.Search{Method: domain.Exact})
			if err != nil {
				return err
			}
			want = want[:min(10, len(want))]
			if len(want) == 0 {
				sum++
				return nil
			}
			// A hit counts when it is no farther than the exact 10th
			// nearest (plus 1e-3, as ann-benchmarks counts): the
			// synthetic corpus has thousands of entries per topic at
			// nearly equal distances, and which of those tied entries
			// come back is no loss of recall.
			dist, err := distances(ctx, db, vec, append(slices.Clone(want), got[:min(10, len(got))]...))
			if err != nil {
				return err
			}
			hit := 0
			for _, id := range got[:min(10, len(got))] {
				if dist[id] <= dist[want[len(want)-1]]+1e-3 {
					hit++
				}
			}
			sum += float64(hit) / float64(len(want))
			return nil
		}(ctx)
		if err != nil {
			tb.Fatal(err)
		}
	}
	return sum / float64(len(queries)), plan
}

// distances returns the cosine distances of entries from vec, as the
// vector leg computes them.
func distances(ctx context.Context, db *pg.DB, vec []float32, ids []string) (map[string]float64, error) {
	rows, err := db.Conn(ctx).Query(ctx, `SELECT artifact_id, (embedding::halfvec(384) <=> $1)
FROM retrieval.entries WHERE tenant_id = $2 AND artifact_id = ANY($3)`, pgvector.NewHalfVector(vec), benchTen, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var id string
		var d float64
		if err := rows.Scan(&id, &d); err != nil {
			return nil, err
		}
		out[id] = d
	}
	return out, rows.Err()
}

// queriesAt draws n queries, each from an entry inside a random scope of
// the given width, and returns them with their scopes.
func queriesAt(c *corpus, l *loaded, width float64, n int) (queries, scopes []string) {
	for range n {
		i := c.rng.IntN(len(l.texts))
		queries = append(queries, c.query(l.texts[i]))
		scopes = append(scopes, scopeAt(width, l.leaves[i]))
	}
	return queries, scopes
}

// TestVectorLegRecall proves the planner's choice: on 4,500 entries the
// whole tree is searched by an HNSW overfetch and keeps recall@10 ≥ 0.95
// against an exact scan, with the served query vector and without its
// feedback, while 10 %, 1 % and 0.1 % scopes are searched exactly.
func TestVectorLegRecall(t *testing.T) {
	ctx := context.Background()
	db := pgtest.New(t)
	c, l := indexedCorpus(ctx, t, db, 7, 4500)
	for _, w := range widths {
		queries, scopes := queriesAt(c, l, w, 40)
		wantPlan := domain.Exact
		if w == 1 {
			wantPlan = domain.Overfetch
		}
		for _, raw := range []bool{false, true} {
			recall, plan := vectorRecall(ctx, t, db, queries, scopes, raw, nil)
			if plan.Method != wantPlan {
				t.Errorf("width %v: plan %v, want %v", w, plan, wantPlan)
			}
			if recall < 0.95 {
				t.Errorf("width %v (%v, raw query %v): vector recall@10 %.3f < 0.95", w, plan, raw, recall)
			}
			t.Logf("width %v: %v, raw query %v: recall@10 %.3f", w, plan, raw, recall)
		}
	}
	// The HNSW searches keep recall where the plan would choose them at
	// scale: an overfetch as wide as the 10 % share needs, and a filtered
	// search there.
	queries, scopes := queriesAt(c, l, 0.1, 40)
	wide := domain.Plan(10_000, 100_000, domain.LegDepth(10))
	for _, force := range []domain.Search{wide, {Method: domain.Filtered}} {
		for _, raw := range []bool{false, true} {
			recall, _ := vectorRecall(ctx, t, db, queries, scopes, raw, &force)
			if recall < 0.95 {
				t.Errorf("width 0.1 (%v forced, raw query %v): vector recall@10 %.3f < 0.95", force, raw, recall)
			}
			t.Logf("width 0.1: %v forced, raw query %v: recall@10 %.3f", force, raw, recall)
		}
	}
	exactReadsItsScope(ctx, t, db, l)
	// Recall through the service answers from the right subtree.
	svc := newBenchService(db)
	q := c.query(l.texts[0])
	res, err := svc.Recall(benchCaller(ctx), domain.Query{Text: q, Scope: leaf(l.leaves[0]), K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Entry.ArtifactID != "art_00000000" {
		t.Fatalf("recall of entry 0's words in its leaf: %+v", res.Hits)
	}
	for _, h := range res.Hits {
		if h.WorkareaPath != leaf(l.leaves[0]) {
			t.Fatalf("hit from %s outside the scope %s", h.WorkareaPath, leaf(l.leaves[0]))
		}
	}
}

// exactReadsItsScope checks the exact scan, which finds a scope's rows
// through the maintained per-workarea counts and the scope index, against
// a plain scan of the table by path: the same rows in the same order,
// with allow and deny lists that cut into the scope, an empty scope and
// a workarea whose count row is missing (its rows are then left out, never
// shown from outside the filter). Beside the scope's rows lie copies of
// the query's nearest entry that no search may return: another tenant's
// (same workarea ids and paths), a steering row and a simulation's row
// outside the caller's fence.
func exactReadsItsScope(ctx context.Context, t *testing.T, db *pg.DB, l *loaded) {
	t.Helper()
	repo := postgres.New(db)
	emb := embed.NewBuiltin(embed.DefaultDim)
	vecs, err := emb.Embed(ctx, embed.Query, []string{l.texts[1]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := leaf(l.leaves[1])
	b, c := a[:strings.LastIndex(a, ".")], a[:strings.Index(a[2:], ".")+2]
	forbidden := []string{"oth_00000001", "steer_00000001", "sim_00000001"}
	if _, err := db.Pool.Exec(ctx, `
INSERT INTO retrieval.entries (tenant_id, artifact_id, workarea_id, workarea_id_path, kind, claim_key, version, text, tsv, embedding, embedding_model, promoted_at, simulation_id)
SELECT x.tenant, x.id, e.workarea_id, e.workarea_id_path, x.kind, e.claim_key, 1, e.text, e.tsv, e.embedding, e.embedding_model, e.promoted_at, x.sim
FROM retrieval.entries e, (VALUES ('ten_other', 'oth_00000001', 'memory', NULL), ($1, 'steer_00000001', 'steering', NULL),
    ($1, 'sim_00000001', 'memory', 'sim_elsewhere')) AS x(tenant, id, kind, sim)
WHERE e.tenant_id = $1 AND e.artifact_id = 'art_00000001'`, benchTen); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO retrieval.workarea_counts (tenant_id, workarea_id, id_path, n)
SELECT 'ten_other', workarea_id, id_path, n FROM retrieval.workarea_counts WHERE tenant_id = $1`, benchTen); err != nil {
		t.Fatal(err)
	}
	plain := func(f app.Filter) []string {
		rows, err := db.Pool.Query(ctx, `SELECT artifact_id FROM retrieval.entries
WHERE tenant_id = $1 AND embedding_model = $2 AND kind <> 'steering' AND simulation_id IS NULL AND workarea_id_path <@ $3::text::ltree
  AND $4::text[]::ltree[] @> workarea_id_path AND NOT ($5::text[]::ltree[] @> workarea_id_path)
ORDER BY (embedding::halfvec(384) <=> $6) + 0 LIMIT 20`, benchTen, emb.Model(), f.Scope, orEmpty(f.Allow), orEmpty(f.Deny), pgvector.NewHalfVector(vecs[0]))
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	filters := []app.Filter{
		{Scope: a, Allow: []string{"r"}},
		{Scope: b, Allow: []string{"r"}},
		{Scope: c, Allow: []string{"r"}},
		{Scope: c, Allow: []string{b}},
		{Scope: b, Allow: []string{"r"}, Deny: []string{a}},
		{Scope: "r.zz", Allow: []string{"r"}},
		{Scope: c, Allow: []string{"r.zz"}},
	}
	for _, f := range filters {
		got, err := repo.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vecs[0], f, 20, domain.Search{Method: domain.Exact})
		if err != nil {
			t.Fatal(err)
		}
		if want := plain(f); !slices.Equal(got, want) {
			t.Errorf("exact scan of %+v: %v, a scan by path %v", f, got, want)
		}
		for _, s := range []domain.Search{{Method: domain.Overfetch, Candidates: 200}, {Method: domain.Filtered}} {
			got, err := repo.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vecs[0], f, 20, s)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range got {
				if slices.Contains(forbidden, id) {
					t.Errorf("%v search of %+v returned %s", s, f, id)
				}
			}
		}
	}
	// Without its count row a workarea is out of every exact scan.
	if _, err := db.Pool.Exec(ctx, `DELETE FROM retrieval.workarea_counts WHERE tenant_id = $1 AND id_path = $2::text::ltree`, benchTen, a); err != nil {
		t.Fatal(err)
	}
	got, err := repo.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vecs[0], app.Filter{Scope: a, Allow: []string{"r"}}, 20, domain.Search{Method: domain.Exact})
	if err != nil || len(got) != 0 {
		t.Errorf("exact scan of a workarea without its count row: %v, %v", got, err)
	}
	if _, err := db.Pool.Exec(ctx, `DELETE FROM retrieval.entries WHERE artifact_id = ANY($1)`, forbidden); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `DELETE FROM retrieval.workarea_counts WHERE tenant_id = 'ten_other'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO retrieval.workarea_counts (tenant_id, workarea_id, id_path, n)
SELECT tenant_id, workarea_id, workarea_id_path, count(*) FROM retrieval.entries WHERE tenant_id = $1 AND workarea_id_path = $2::text::ltree
GROUP BY 1, 2, 3`, benchTen, a); err != nil {
		t.Fatal(err)
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// BenchmarkRecall measures recall latency (the service's Recall: steering,
// both legs, fusion, the read log) at growing corpus sizes, for scopes of
// 100 %, 10 %, 1 % and 0.1 % of the rows at concurrency 1 and 16, with the
// vector leg's recall@10 against exact search, the CPU a recall costs
// beside a bare HNSW query's, and the load and HNSW build times. The rows
// are bulk-loaded (loaded.load: COPY, the indexes built once). Sizes come
// from RECALL_SIZES (default 10000,100000); RECALL_DATABASE_URL runs in an
// existing database and keeps what an earlier run loaded there (a million
// entries load in about 3 minutes and index in about 25).
// RECALL_SUBTREE_INDEXES=1 builds the ten 10 % subtrees' own HNSW indexes
// (about 3 minutes each at 1M) before measuring, =0 drops them:
//
//	go test -run '^$' -bench Recall -benchtime 1x -timeout 2h ./contexts/retrieval
func BenchmarkRecall(b *testing.B) {
	// The service runs in process; collect garbage as oml-server serve
	// does (GOGC 400 unless set, cmd/oml-server/gc.go), not at Go's 100.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	sizes := []int{10000, 100000}
	if v := os.Getenv("RECALL_SIZES"); v != "" {
		sizes = nil
		for _, s := range strings.Split(v, ",") {
			n, err := strconv.Atoi(s)
			if err != nil {
				b.Fatalf("RECALL_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	ctx := context.Background()
	db := benchDB(b)
	c, l := newCorpus(42), &loaded{}
	l.resume(ctx, b, db)
	repo := &timedRepo{Repository: postgres.New(db)}
	svc := newBenchService(db)
	svc.Repo = repo
	var builds, stages, stageCPU, costs, bare, warmed []string
	fmt.Printf("\n| rows | scope | rows in scope | vector search | c | p50 ms | p99 ms | recalls/s | vector recall@10 | without feedback |\n")
	fmt.Printf("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, n := range sizes {
		if n < len(l.texts) {
			continue // a reused database already holds more
		}
		// Load without the HNSW index, then build it once, as a restore or
		// reindex would.
		start := time.Now()
		if n > len(l.texts) || !hasVectorIndex(ctx, b, db) {
			dropVectorIndex(ctx, b, db)
			loadTime := "loaded by an earlier run"
			if n > len(l.texts) {
				l.load(ctx, b, db, c, n)
				loadTime = fmt.Sprintf("%.1f s", time.Since(start).Seconds())
			}
			start = time.Now()
			buildVectorIndex(ctx, b, db)
			builds = append(builds, fmt.Sprintf("| %d | %s | %.1f s |", n, loadTime, time.Since(start).Seconds()))
		}
		if subtrees := subtreeIndexes(ctx, b, db); subtrees != "" {
			builds = append(builds, subtrees)
		}
		warmed = append(warmed, fmt.Sprintf("| %d | %s |", n, prewarm(ctx, b, db)))
		// A server's pooled connections are long-lived; a new Postgres
		// backend runs its first queries several times slower (on this VM
		// the first HNSW walk of a backend took 130 ms, the tenth 1.5 ms,
		// as it maps the shared buffers it touches). Warm every pooled
		// connection at every width before measuring steady state.
		// With no gate, so that all 16 connections the bare baseline and
		// the ungated runs use are warm.
		repo.reset()
		gated := svc.Gate
		svc.Gate = nil
		for _, w := range widths {
			queries, scopes := queriesAt(c, l, w, 160)
			runRecalls(benchCaller(ctx), b, svc, queries, scopes, 16)
		}
		svc.Gate = gated
		// The baseline: a bare top-10 HNSW query on the same index, the
		// whole tree's queries, at concurrency 16.
		{
			queries, _ := queriesAt(c, l, 1, 1600)
			cpu0 := readCPU(b)
			lat, elapsed := runBare(ctx, b, db, queries, 16)
			cpu := readCPU(b).since(cpu0, len(lat))
			bare = append(bare, fmt.Sprintf("| %d | %.0f | %.2f | %.2f | %.2f | %.2f |", n, float64(len(lat))/elapsed.Seconds(),
				ms(pct(lat, 0.5)), cpu.service, cpu.postgres, cpu.service+cpu.postgres))
		}
		for _, w := range widths {
			queries, scopes := queriesAt(c, l, w, recallSample)
			recall, plan := vectorRecall(ctx, b, db, queries, scopes, false, nil)
			rawRecall, _ := vectorRecall(ctx, b, db, queries, scopes, true, nil)
			for _, conc := range []int{1, 16} {
				total := max(400, 50*conc) // 400 at c=1, 800 at c=16
				queries, scopes := queriesAt(c, l, w, total)
				repo.reset()
				cpu0 := readCPU(b)
				lat, elapsed := runRecalls(benchCaller(ctx), b, svc, queries, scopes, conc)
				if conc == 16 {
					cpu := readCPU(b).since(cpu0, len(lat))
					// The same recalls with no gate, every one's statements
					// at once: what the gate buys.
					gated := svc.Gate
					svc.Gate = nil
					cpuOpen := readCPU(b)
					latOpen, elapsedOpen := runRecalls(benchCaller(ctx), b, svc, queries, scopes, conc)
					open := readCPU(b).since(cpuOpen, len(latOpen))
					svc.Gate = gated
					costs = append(costs, fmt.Sprintf("| %d | %g %% | %.0f | %.2f | %.2f | %.2f | %.0f | %.2f | %.2f |", n, w*100,
						float64(len(lat))/elapsed.Seconds(), cpu.service, cpu.postgres, cpu.service+cpu.postgres,
						float64(len(latOpen))/elapsedOpen.Seconds(), ms(pct(latOpen, 0.99)), open.service+open.postgres))
				}
				fmt.Printf("| %d | %g %% | %d | %s | %d | %.2f | %.2f | %.0f | %.3f | %.3f |\n",
					n, w*100, int(float64(n)*w), plan, conc, ms(pct(lat, 0.5)), ms(pct(lat, 0.99)),
					float64(len(lat))/elapsed.Seconds(), recall, rawRecall)
				if conc == 1 {
					stages = append(stages, fmt.Sprintf("| %d | %g %% | %.2f | %s |", n, w*100, ms(pct(lat, 0.5)), repo.medians()))
				}
			}
			// CPU per stage: a pass of its own, one recall at a time, as
			// the readings between stages cost time the latency table
			// above should not carry. With one P the Go scheduler does not
			// spin idle threads while a statement is out (at GOMAXPROCS 2
			// that spinning was most of this process's time at c=1), so
			// what this process is charged is its work.
			queries, scopes = queriesAt(c, l, w, 200)
			repo.reset()
			repo.cpu = newCPUProbe(ctx, b, db)
			procs := runtime.GOMAXPROCS(1)
			before := repo.cpu.readBefore()
			repo.cpu.overhead = 0
			runRecalls(benchCaller(ctx), b, svc, queries, scopes, 1)
			whole := repo.cpu.wholeSpent(repo.cpu.read(), before)
			runtime.GOMAXPROCS(procs)
			stageCPU = append(stageCPU, fmt.Sprintf("| %d | %g %% | %s |", n, w*100, repo.cpuCells(len(queries), whole)))
			repo.cpu = nil
		}
	}
	fmt.Printf("\n| rows | bulk load (COPY, full-text and path indexes) | HNSW build (m 16, ef_construction 200, one worker) |\n| ---: | ---: | ---: |\n")
	for _, row := range builds {
		fmt.Println(row)
	}
	fmt.Printf("\n| rows | table and indexes | shared_buffers | prewarmed (pg_prewarm) |\n| ---: | ---: | ---: | --- |\n")
	for _, row := range warmed {
		fmt.Println(row)
	}
	fmt.Printf("\nCPU per recall at concurrency 16, %d at a time (the gate, OML_RECALL_CONCURRENCY's default; machine CPU time over the run, split into this process's and the rest, which is Postgres), and the same recalls with no gate:\n\n", svc.Gate.Size())
	fmt.Printf("| rows | scope | recalls/s | CPU ms: service | CPU ms: Postgres | CPU ms in all | no gate: recalls/s | p99 ms | CPU ms in all |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, row := range costs {
		fmt.Println(row)
	}
	fmt.Printf("\nThe baseline: one bare `ORDER BY embedding <=> $1 LIMIT 10` on the same HNSW index (ef_search 64), prepared, at concurrency 16:\n\n")
	fmt.Printf("| rows | queries/s | p50 ms | CPU ms: client | CPU ms: Postgres | CPU ms in all |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, row := range bare {
		fmt.Println(row)
	}
	fmt.Printf("\nMedian ms per stage at concurrency 1 (the rest of a recall is access, query embedding and fusion):\n\n")
	fmt.Printf("| rows | scope | recall p50 | %s |\n| ---: | ---: | ---: |%s\n", strings.Join(stageNames, " | "), strings.Repeat(" ---: |", len(stageNames)))
	for _, row := range stages {
		fmt.Println(row)
	}
	fmt.Printf("\nCPU ms per recall by stage at concurrency 1, in all (this process and Postgres's client backends; Postgres's part in brackets; \"the rest\" is access, query embedding and fusion):\n\n")
	fmt.Printf("| rows | scope | recall | %s | the rest |\n| ---: | ---: | ---: |%s ---: |\n", strings.Join(stageNames, " | "), strings.Repeat(" ---: |", len(stageNames)))
	for _, row := range stageCPU {
		fmt.Println(row)
	}
}

// subtreeIndexes builds (RECALL_SUBTREE_INDEXES=1) or drops (=0) the
// subtree indexes of the ten 10 % subtrees, as oml-server subtree-index
// does; unset, it leaves what the database has. It returns a table row
// for what it built, or "".
func subtreeIndexes(ctx context.Context, b *testing.B, db *pg.DB) string {
	want := os.Getenv("RECALL_SUBTREE_INDEXES")
	if want != "0" && want != "1" {
		return ""
	}
	repo := postgres.New(db)
	emb := embed.NewBuiltin(embed.DefaultDim)
	start := time.Now()
	built := 0
	for a := range 10 {
		path := fmt.Sprintf("r.a%d", a)
		if want == "0" {
			if _, _, err := repo.DropSubtreeIndex(ctx, benchTen, emb.Model(), path); err != nil {
				b.Fatal(err)
			}
			continue
		}
		ix, err := repo.EnsureSubtreeIndex(ctx, benchTen, emb.Model(), emb.Dim(), path)
		if err != nil {
			b.Fatal(err)
		}
		if ix.Built {
			built++
		}
	}
	if built == 0 {
		return ""
	}
	return fmt.Sprintf("| %d subtree indexes of r.a0–r.a9 | | %.1f s |", built, time.Since(start).Seconds())
}

// benchDB is a fresh database, or the one RECALL_DATABASE_URL names
// (migrated to the current schema, its rows kept) so a long run at 1M
// rows need not load again.
func benchDB(b *testing.B) *pg.DB {
	b.Helper()
	if u := os.Getenv("RECALL_DATABASE_URL"); u != "" {
		return pgtest.Keep(b, u)
	}
	return pgtest.New(b)
}

// stageNames are the repository calls a recall makes, in order. A
// filter's count is reused for app.ReachTTL, so "reachable" times the
// counts recall makes, fewer than its recalls. (Until 2026-12-03 the
// tables had a "feedback" stage, now inside the full-text leg's statement,
// and separate "steering" and "entries" stages, now one.)
var stageNames = []string{"query terms", "reachable", "full-text", "vector", "hits and steering", "read log"}

// timedRepo records how long each repository call of a recall takes
// and, while cpu is set (one recall at a time), the CPU time it costs.
type timedRepo struct {
	app.Repository
	mu  sync.Mutex
	d   map[string][]time.Duration
	cpu *cpuProbe
	// spent is each stage's CPU time, this process's and Postgres's,
	// summed over the recalls measured with cpu set.
	spent map[string]cpuSpent
}

func (r *timedRepo) reset() {
	r.mu.Lock()
	r.d = map[string][]time.Duration{}
	r.spent = map[string]cpuSpent{}
	r.mu.Unlock()
}

// start begins timing a stage: its CPU reading (when probing) before
// the clock starts, so that reading does not count in the wall time.
func (r *timedRepo) start() stageStart {
	var st stageStart
	if r.cpu != nil {
		st.cpu = r.cpu.readBefore()
	}
	st.at = time.Now()
	return st
}

type stageStart struct {
	at  time.Time
	cpu cpuSpent
}

func (r *timedRepo) since(stage string, st stageStart) {
	d := time.Since(st.at)
	var used cpuSpent
	if r.cpu != nil {
		used = r.cpu.read().minus(st.cpu)
	}
	r.mu.Lock()
	r.d[stage] = append(r.d[stage], d)
	r.spent[stage] = r.spent[stage].plus(used)
	r.mu.Unlock()
}

// cpuCells formats each stage's mean CPU per recall in milliseconds, in
// all and Postgres's part, over n recalls that cost whole in all; the
// last cell is the rest of a recall (access, the query's embedding,
// fusion).
func (r *timedRepo) cpuCells(n int, whole cpuSpent) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	cell := func(c cpuSpent) string {
		return fmt.Sprintf("%.2f (%.2f)", ms(c.self+c.postgres)/float64(n), ms(c.postgres)/float64(n))
	}
	cells := []string{cell(whole)}
	rest := whole
	for _, s := range stageNames {
		cells = append(cells, cell(r.spent[s]))
		rest = rest.minus(r.spent[s])
	}
	return strings.Join(append(cells, cell(rest)), " | ")
}

// medians formats each stage's median in milliseconds as table cells.
func (r *timedRepo) medians() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	cells := make([]string, len(stageNames))
	for i, s := range stageNames {
		cells[i] = "—"
		if d := r.d[s]; len(d) > 0 {
			cells[i] = fmt.Sprintf("%.2f", ms(pct(d, 0.5)))
		}
	}
	return strings.Join(cells, " | ")
}

func (r *timedRepo) QueryTerms(ctx context.Context, tenant, query string) ([]domain.TermStat, domain.Corpus, error) {
	defer r.since("query terms", r.start())
	return r.Repository.QueryTerms(ctx, tenant, query)
}

func (r *timedRepo) Reachable(ctx context.Context, tenant string, f app.Filter) (int64, error) {
	defer r.since("reachable", r.start())
	return r.Repository.Reachable(ctx, tenant, f)
}

func (r *timedRepo) FullText(ctx context.Context, tenant string, q domain.FullTextQuery, f app.Filter, limit int, want app.Vectors) ([]string, [][]float32, error) {
	defer r.since("full-text", r.start())
	return r.Repository.FullText(ctx, tenant, q, f, limit, want)
}

func (r *timedRepo) Vector(ctx context.Context, tenant, model string, dim int, vec []float32, f app.Filter, limit int, s domain.Search) ([]string, error) {
	defer r.since("vector", r.start())
	return r.Repository.Vector(ctx, tenant, model, dim, vec, f, limit, s)
}

func (r *timedRepo) HitsAndSteering(ctx context.Context, tenant string, ids []string, steer app.Filter, limit int) ([]app.Entry, []app.Entry, error) {
	defer r.since("hits and steering", r.start())
	return r.Repository.HitsAndSteering(ctx, tenant, ids, steer, limit)
}

func (r *timedRepo) LogRead(ctx context.Context, l app.ReadLog) error {
	defer r.since("read log", r.start())
	return r.Repository.LogRead(ctx, l)
}

// The built-in model and its HNSW index, as the adapter names it.
var (
	builtinModel = embed.NewBuiltin(embed.DefaultDim).Model()
	builtinIndex = postgres.VectorIndexName(builtinModel, embed.DefaultDim)
)

// TestBuiltinIndexName pins the built-in model's index to the name the
// migrations create, so a new embedder version cannot leave the adapter
// building a second index beside the migrated one.
func TestBuiltinIndexName(t *testing.T) {
	if builtinIndex != "entries_hnsw_builtin_384" {
		t.Fatalf("the adapter names %s's index %s, the migrations entries_hnsw_builtin_384", builtinModel, builtinIndex)
	}
	if got := postgres.ScopeIndexName(builtinModel, embed.DefaultDim); got != "entries_scope_builtin_384" {
		t.Fatalf("the adapter names %s's scope index %s, the migrations entries_scope_builtin_384", builtinModel, got)
	}
}

func hasVectorIndex(ctx context.Context, tb testing.TB, db *pg.DB) bool {
	tb.Helper()
	var ok bool
	if err := db.Pool.QueryRow(ctx, `SELECT to_regclass('retrieval.' || $1) IS NOT NULL`, builtinIndex).Scan(&ok); err != nil {
		tb.Fatal(err)
	}
	return ok
}

// indexedCorpus loads n entries of the corpus drawn with seed as the
// benchmark does (the HNSW index dropped for the load, then built once).
func indexedCorpus(ctx context.Context, tb testing.TB, db *pg.DB, seed uint64, n int) (*corpus, *loaded) {
	tb.Helper()
	c, l := newCorpus(seed), &loaded{}
	dropVectorIndex(ctx, tb, db)
	l.load(ctx, tb, db, c, n)
	buildVectorIndex(ctx, tb, db)
	return c, l
}

func dropVectorIndex(ctx context.Context, tb testing.TB, db *pg.DB) {
	tb.Helper()
	if _, err := db.Pool.Exec(ctx, `DROP INDEX IF EXISTS retrieval.`+builtinIndex); err != nil {
		tb.Fatal(err)
	}
}

// buildVectorIndex builds the built-in model's HNSW index as migration
// 0013 defines it, then vacuums and analyses the table.
func buildVectorIndex(ctx context.Context, tb testing.TB, db *pg.DB) {
	tb.Helper()
	if _, err := db.Pool.Exec(ctx, fmt.Sprintf(`SET max_parallel_maintenance_workers = 0;
SET maintenance_work_mem = '2GB';
CREATE INDEX %s ON retrieval.entries
    USING hnsw ((embedding::halfvec(%d)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 200)
    WHERE embedding_model = '%s';
RESET maintenance_work_mem;
RESET max_parallel_maintenance_workers`, builtinIndex, embed.DefaultDim, builtinModel)); err != nil {
		tb.Fatal(err)
	}
	// Vacuum as autovacuum soon would after a bulk load: the visibility
	// map and hint bits a freshly loaded table lacks cost the first
	// queries heap visits a serving tier in steady state does not pay.
	if _, err := db.Pool.Exec(ctx, `VACUUM (ANALYZE) retrieval.entries`); err != nil {
		tb.Fatal(err)
	}
	// Then checkpoint, so that writing out the load's dirty buffers does
	// not land in the middle of the measurements (a role without the
	// right measures with them).
	if _, err := db.Pool.Exec(ctx, `CHECKPOINT`); err != nil {
		tb.Logf("no checkpoint before measuring: %v", err)
	}
}

// prewarm reads the serving tier's table and indexes into Postgres's
// shared buffers (pg_prewarm), as a server that has run for a while has
// them, when they fit in a tenth less than the buffers; otherwise recall
// reads through the operating system's cache and the benchmark says so.
func prewarm(ctx context.Context, b *testing.B, db *pg.DB) string {
	var total, buffers int64
	err := db.Pool.QueryRow(ctx, `SELECT sum(pg_relation_size(c.oid))::bigint,
    (SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers')
FROM pg_class c WHERE c.relnamespace = 'retrieval'::regnamespace AND (c.relname = 'entries' OR c.relname LIKE 'entries\_%')`).Scan(&total, &buffers)
	if err != nil {
		b.Fatal(err)
	}
	note := fmt.Sprintf("%d MB | %d MB", total>>20, buffers>>20)
	if float64(total) > 0.9*float64(buffers) {
		return note + " | no: recall reads through the OS cache"
	}
	_, err = db.Pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_prewarm;
SELECT pg_prewarm(c.oid) FROM pg_class c
WHERE c.relnamespace = 'retrieval'::regnamespace AND (c.relname = 'entries' OR c.relname LIKE 'entries\_%')`)
	if err != nil {
		b.Fatalf("prewarm: %v", err)
	}
	return note + " | yes"
}

// runRecalls runs the queries with conc workers and returns each call's
// latency and the wall time.
func runRecalls(ctx context.Context, b *testing.B, svc *app.Service, queries, scopes []string, conc int) ([]time.Duration, time.Duration) {
	lat := make([]time.Duration, len(queries))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for i := range next {
				t0 := time.Now()
				_, err := svc.Recall(ctx, domain.Query{Text: queries[i], Scope: scopes[i], K: 10})
				lat[i] = time.Since(t0)
				if err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range queries {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	return lat, time.Since(start)
}

// runBare runs a bare top-10 HNSW query for each query's raw embedding
// with conc connections (hnsw.ef_search 64, as the whole-tree overfetch
// at 100k walks), prepared once per connection, and returns each query's
// latency and the wall time: what pgvector alone does for a recall's
// vector search, the baseline recall's CPU is judged against.
func runBare(ctx context.Context, b *testing.B, db *pg.DB, queries []string, conc int) ([]time.Duration, time.Duration) {
	emb := embed.NewBuiltin(embed.DefaultDim)
	vecs, err := emb.Embed(ctx, embed.Query, queries, nil)
	if err != nil {
		b.Fatal(err)
	}
	sql := fmt.Sprintf(`SELECT artifact_id FROM retrieval.entries WHERE embedding_model = '%s'
ORDER BY embedding::halfvec(%d) <=> $1 LIMIT 10`, emb.Model(), emb.Dim())
	lat := make([]time.Duration, len(vecs))
	next := make(chan int)
	var wg sync.WaitGroup
	errs := make([]error, conc)
	start := time.Now()
	for w := range conc {
		wg.Go(func() {
			conn, err := db.Pool.Acquire(ctx)
			if err != nil {
				errs[w] = err
				for range next {
				}
				return
			}
			defer conn.Release()
			defer func() { _, _ = conn.Exec(ctx, "RESET hnsw.ef_search") }()
			if _, err := conn.Exec(ctx, "SET hnsw.ef_search = 64"); err != nil {
				errs[w] = err
			}
			for i := range next {
				t0 := time.Now()
				rows, err := conn.Query(ctx, sql, pgvector.NewHalfVector(vecs[i]))
				if err == nil {
					_, err = pgx.CollectRows(rows, pgx.RowTo[string])
				}
				lat[i] = time.Since(t0)
				errs[w] = cmp.Or(errs[w], err)
			}
		})
	}
	for i := range vecs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return lat, time.Since(start)
}

// cpuTimes is the machine's busy CPU time (not idle, iowait or steal)
// and this process's.
type cpuTimes struct{ machine, self time.Duration }

func readCPU(tb testing.TB) cpuTimes {
	tb.Helper()
	t, err := cpustat.Read()
	if err != nil {
		tb.Fatal(err)
	}
	return cpuTimes{machine: t.Busy, self: t.Self}
}

// cpuPer is CPU milliseconds per operation: the service's (this process)
// and the rest of the machine's (Postgres, on a machine otherwise idle).
type cpuPer struct{ service, postgres float64 }

func (t cpuTimes) since(t0 cpuTimes, ops int) cpuPer {
	self, machine := t.self-t0.self, t.machine-t0.machine
	return cpuPer{service: ms(self) / float64(ops), postgres: ms(max(machine-self, 0)) / float64(ops)}
}

// cpuProbe reads the CPU time this process and the database's client
// backends have had, to the nanosecond: the process's from getrusage, each
// backend's from /proc/PID/schedstat (its time on a CPU), the backends
// being those of pg_stat_activity when the probe was made. With one
// recall at a time and the pool warmed, a reading's difference is what
// the code between the readings cost.
type cpuProbe struct {
	stats []string
	// overhead is this process's time spent reading the backends' files,
	// which a span's readings take from inside a longer span (the whole
	// recall): taken back out of it (wholeSpent).
	overhead time.Duration
}

type cpuSpent struct{ self, postgres time.Duration }

func (c cpuSpent) plus(o cpuSpent) cpuSpent {
	return cpuSpent{c.self + o.self, c.postgres + o.postgres}
}
func (c cpuSpent) minus(o cpuSpent) cpuSpent {
	return cpuSpent{c.self - o.self, c.postgres - o.postgres}
}

func newCPUProbe(ctx context.Context, tb testing.TB, db *pg.DB) *cpuProbe {
	tb.Helper()
	rows, err := db.Pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`)
	if err != nil {
		tb.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		tb.Fatal(err)
	}
	p := &cpuProbe{}
	for _, pid := range pids {
		path := fmt.Sprintf("/proc/%d/schedstat", pid)
		if _, err := os.ReadFile(path); err != nil {
			tb.Fatalf("Postgres's CPU time per stage needs the database on this machine: %v", err)
		}
		p.stats = append(p.stats, path)
	}
	return p
}

// read ends a measured span: this process's time first, so reading the
// backends' files is not counted in it. readBefore starts one, the other
// way round.
func (p *cpuProbe) read() cpuSpent {
	self := p.self()
	return cpuSpent{self: self, postgres: p.postgres()}
}

func (p *cpuProbe) readBefore() cpuSpent {
	pg := p.postgres()
	return cpuSpent{self: p.self(), postgres: pg}
}

func (p *cpuProbe) self() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// wholeSpent is what a span between two readings cost, less the readings
// between them.
func (p *cpuProbe) wholeSpent(end, start cpuSpent) cpuSpent {
	c := end.minus(start)
	c.self -= p.overhead
	return c
}

func (p *cpuProbe) postgres() time.Duration {
	s0 := p.self()
	defer func() { p.overhead += p.self() - s0 }()
	var sum time.Duration
	for _, path := range p.stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // a backend that ended: its time is gone from both readings' sums
		}
		field, _, _ := strings.Cut(string(data), " ")
		if ns, err := strconv.ParseInt(field, 10, 64); err == nil {
			sum += time.Duration(ns)
		}
	}
	return sum
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
