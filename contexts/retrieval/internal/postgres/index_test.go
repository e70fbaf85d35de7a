package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/platform/pgtest"
)

// Promotions and withdrawals running at once keep the statistics recall
// ranks with exact: the corpus row, every lexeme's document frequency and
// every workarea's count equal a recount from the entries, and none of
// them deadlocks on the shared rows (EntryCounted takes them in the same
// order as Remove). A promotion takes its staged embedding with it.
func TestIndexAndRemoveKeepStatisticsExact(t *testing.T) {
	db := pgtest.New(t)
	r := New(db)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const tenant, n = "ten_stats", 48
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima")
	entry := func(i int) app.Entry {
		// Overlapping lexemes, in different orders, so that concurrent
		// promotions share rows of term_df.
		var text []string
		for k := range 4 + i%5 {
			text = append(text, words[(i*7+k*5)%len(words)])
		}
		wa := fmt.Sprintf("wa_%d", i%4)
		return app.Entry{TenantID: tenant, ArtifactID: fmt.Sprintf("art_%02d", i), WorkareaID: wa, WorkareaIDPath: "root." + wa,
			Kind: "memory", ClaimKey: fmt.Sprintf("k%d", i), Version: 1, Text: strings.Join(text, " "), PromotedAt: time.Now()}
	}
	vec := []float32{0.6, 0.8, 0}
	// Half the claims were staged with an embedding at submission; the
	// others bring none.
	for i := 0; i < n; i += 2 {
		if err := r.Stage(ctx, tenant, entry(i).ArtifactID, vec, "m3"); err != nil {
			t.Fatal(err)
		}
	}
	// A first round promotes every claim; a second, at the same time as
	// the rest of the first, withdraws every third one.
	var wg sync.WaitGroup
	errc := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() {
			err := db.InTx(ctx, func(ctx context.Context) error { return r.Index(ctx, entry(i)) })
			if err == nil && i%3 == 0 {
				err = db.InTx(ctx, func(ctx context.Context) error { return r.Remove(ctx, tenant, entry(i).ArtifactID) })
			}
			errc <- err
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	var entries, staged, embedded int
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM retrieval.entries WHERE tenant_id = $1),
    (SELECT count(*) FROM retrieval.staged WHERE tenant_id = $1),
    (SELECT count(*) FROM retrieval.entries WHERE tenant_id = $1 AND embedding IS NOT NULL AND embedding_model = 'm3')`, tenant).Scan(&entries, &staged, &embedded); err != nil {
		t.Fatal(err)
	}
	if entries != n-n/3 || staged != 0 || embedded != (n-n/3)/2 {
		t.Fatalf("entries %d staged %d embedded %d, want %d, 0, %d", entries, staged, embedded, n-n/3, (n-n/3)/2)
	}
	for name, q := range map[string]string{
		"corpus": `SELECT count(*) FROM retrieval.corpus c,
    (SELECT count(*) AS docs, coalesce(sum(length(tsv)), 0) AS lexemes FROM retrieval.entries WHERE tenant_id = $1) x
WHERE c.tenant_id = $1 AND (c.docs, c.lexemes) IS DISTINCT FROM (x.docs, x.lexemes)`,
		"lexemes": `SELECT count(*) FROM (
    SELECT term, df FROM retrieval.term_df WHERE tenant_id = $1 AND df > 0
    EXCEPT ALL SELECT t.term, count(*) FROM retrieval.entries e, unnest(tsvector_to_array(e.tsv)) AS t(term) WHERE e.tenant_id = $1 GROUP BY t.term
) wrong`,
		"lexemes missing": `SELECT count(*) FROM (
    SELECT t.term, count(*) FROM retrieval.entries e, unnest(tsvector_to_array(e.tsv)) AS t(term) WHERE e.tenant_id = $1 GROUP BY t.term
    EXCEPT ALL SELECT term, df FROM retrieval.term_df WHERE tenant_id = $1
) wrong`,
		"workarea counts missing": `SELECT count(*) FROM (
    SELECT workarea_id, count(*) FROM retrieval.entries WHERE tenant_id = $1 GROUP BY workarea_id
    EXCEPT ALL SELECT workarea_id, n FROM retrieval.workarea_counts WHERE tenant_id = $1
) wrong`,
		"workarea counts": `SELECT count(*) FROM (
    SELECT workarea_id, n FROM retrieval.workarea_counts WHERE tenant_id = $1 AND n > 0
    EXCEPT ALL SELECT workarea_id, count(*) FROM retrieval.entries WHERE tenant_id = $1 GROUP BY workarea_id
) wrong`,
	} {
		var wrong int
		if err := db.Pool.QueryRow(ctx, q, tenant).Scan(&wrong); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if wrong != 0 {
			t.Errorf("%s: %d rows differ from a recount", name, wrong)
		}
	}
	var corpusRows int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM retrieval.corpus WHERE tenant_id = $1`, tenant).Scan(&corpusRows); err != nil || corpusRows != 1 {
		t.Fatalf("corpus rows %d (%v), want 1", corpusRows, err)
	}
}
