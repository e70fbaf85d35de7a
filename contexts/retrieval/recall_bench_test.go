package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/domain"
	"github.com/omlhub/oml/contexts/retrieval/internal/embed"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

// widths are the scope widths measured, as shares of the rows.
var widths = []float64{1, 0.1, 0.01, 0.001}

func newBenchService(db *pg.DB) *app.Service {
	return app.New(app.Deps{
		Repo: postgres.New(db), Access: treeAccess{}, Embedder: adapter{embed.NewBuiltin(embed.DefaultDim)}, Tx: db,
		Fusion: domain.DefaultFusion, Feedback: domain.DefaultFeedback,
	})
}

// vectorRecall runs queries' vector legs as recall would plan them and as
// an exact scan, and returns the mean overlap of their top 10 and the plan
// used.
func vectorRecall(ctx context.Context, tb testing.TB, db *pg.DB, queries []string, scopes []string) (float64, domain.Search) {
	tb.Helper()
	repo := postgres.New(db)
	emb := adapter{embed.NewBuiltin(embed.DefaultDim)}
	var sum float64
	var plan domain.Search
	for i, q := range queries {
		err := db.InSnapshot(ctx, func(ctx context.Context) error {
			terms, corpus, err := repo.QueryTerms(ctx, benchTen, q)
			if err != nil {
				return err
			}
			weights := map[string]float32{}
			for _, t := range terms {
				weights[t.Term] = float32(domain.IDF(t.DF, corpus.Docs))
			}
			vec, err := emb.EmbedQuery(ctx, q, weights)
			if err != nil {
				return err
			}
			f := app.Filter{Scope: scopes[i], Allow: []string{scopes[i]}}
			reach, err := repo.Reachable(ctx, benchTen, f)
			if err != nil {
				return err
			}
			plan = domain.Plan(reach, corpus.Docs)
			got, err := repo.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vec, f, domain.LegDepth(10), plan)
			if err != nil {
				return err
			}
			want, err := repo.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vec, f, domain.LegDepth(10), domain.Exact)
			if err != nil {
				return err
			}
			want = want[:min(10, len(want))]
			hit := 0
			for _, id := range got[:min(10, len(got))] {
				if slices.Contains(want, id) {
					hit++
				}
			}
			if len(want) > 0 {
				sum += float64(hit) / float64(len(want))
			} else {
				sum++
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return sum / float64(len(queries)), plan
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
// whole tree is searched by HNSW and keeps recall@10 ≥ 0.95 against an
// exact scan, while 10 %, 1 % and 0.1 % scopes are searched exactly.
func TestVectorLegRecall(t *testing.T) {
	ctx := context.Background()
	db := pgtest.New(t)
	c, l := newCorpus(7), &loaded{}
	dropVectorIndex(ctx, t, db)
	l.load(ctx, t, db, c, 4500)
	buildVectorIndex(ctx, t, db)
	for _, w := range widths {
		queries, scopes := queriesAt(c, l, w, 40)
		recall, plan := vectorRecall(ctx, t, db, queries, scopes)
		wantPlan := domain.Exact
		if w == 1 {
			wantPlan = domain.HNSW
		}
		if plan != wantPlan {
			t.Errorf("width %v: plan %v, want %v", w, plan, wantPlan)
		}
		if recall < 0.95 {
			t.Errorf("width %v (%v): vector recall@10 %.3f < 0.95", w, plan, recall)
		}
		t.Logf("width %v: %v, recall@10 %.3f", w, plan, recall)
	}
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

// BenchmarkRecall measures recall latency (the service's Recall: steering,
// both legs, fusion, the read log) at growing corpus sizes, for scopes of
// 100 %, 10 %, 1 % and 0.1 % of the rows at concurrency 1 and 16, with the
// vector leg's recall@10 against exact search and the HNSW build time. The
// rows are written through the serving tier's adapter. Sizes come from
// RECALL_SIZES (default 10000,100000):
//
//	go test -run '^$' -bench Recall -benchtime 1x -timeout 2h ./contexts/retrieval
func BenchmarkRecall(b *testing.B) {
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
	db := pgtest.New(b)
	c, l := newCorpus(42), &loaded{}
	svc := newBenchService(db)
	var builds []string
	fmt.Printf("\n| rows | scope | rows in scope | vector search | c | p50 ms | p99 ms | recalls/s | vector recall@10 |\n")
	fmt.Printf("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, n := range sizes {
		// Load without the HNSW index, then build it once, as a restore or
		// reindex would.
		dropVectorIndex(ctx, b, db)
		start := time.Now()
		l.load(ctx, b, db, c, n)
		loadTime := time.Since(start)
		start = time.Now()
		buildVectorIndex(ctx, b, db)
		builds = append(builds, fmt.Sprintf("| %d | %.1f s | %.1f s |", n, loadTime.Seconds(), time.Since(start).Seconds()))
		for _, w := range widths {
			queries, scopes := queriesAt(c, l, w, 50)
			recall, plan := vectorRecall(ctx, b, db, queries, scopes)
			for _, conc := range []int{1, 16} {
				total := 200 * conc / min(conc, 4) // 200 at c=1, 800 at c=16
				queries, scopes := queriesAt(c, l, w, total)
				lat, elapsed := runRecalls(benchCaller(ctx), b, svc, queries, scopes, conc)
				fmt.Printf("| %d | %g %% | %d | %s | %d | %.2f | %.2f | %.0f | %.3f |\n",
					n, w*100, int(float64(n)*w), plan, conc, ms(pct(lat, 0.5)), ms(pct(lat, 0.99)),
					float64(len(lat))/elapsed.Seconds(), recall)
			}
		}
	}
	fmt.Printf("\n| rows | load through the adapter | HNSW build (m 16, ef_construction 200, one worker) |\n| ---: | ---: | ---: |\n")
	for _, row := range builds {
		fmt.Println(row)
	}
}

func dropVectorIndex(ctx context.Context, tb testing.TB, db *pg.DB) {
	tb.Helper()
	if _, err := db.Pool.Exec(ctx, `DROP INDEX IF EXISTS retrieval.entries_hnsw_builtin_384`); err != nil {
		tb.Fatal(err)
	}
}

// buildVectorIndex builds the built-in model's HNSW index as migration
// 0010 defines it, and refreshes the planner's statistics.
func buildVectorIndex(ctx context.Context, tb testing.TB, db *pg.DB) {
	tb.Helper()
	if _, err := db.Pool.Exec(ctx, `SET max_parallel_maintenance_workers = 0;
SET maintenance_work_mem = '2GB';
CREATE INDEX entries_hnsw_builtin_384 ON retrieval.entries
    USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 200)
    WHERE embedding_model = 'oml-builtin-v1-384';
RESET maintenance_work_mem;
RESET max_parallel_maintenance_workers;
ANALYZE retrieval.entries`); err != nil {
		tb.Fatal(err)
	}
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

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
