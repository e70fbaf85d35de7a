package retrieval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/domain"
	"github.com/omlhub/oml/contexts/retrieval/internal/embed"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

// TestSubtreeIndex builds the HNSW index of one subtree and checks that
// the vector leg walks it, and only it, for scopes inside the subtree;
// that the rows it returns pass the same filter as every vector search
// (another tenant's rows at the same paths, a steering row, a simulation's
// row outside the fence and a denied workarea are never returned, the
// index's predicate notwithstanding); that a deeper scope finds the index
// of its nearest indexed ancestor; and that dropping the index stops its
// use while recall still answers.
func TestSubtreeIndex(t *testing.T) {
	ctx := context.Background()
	db := pgtest.New(t)
	c, l := indexedCorpus(ctx, t, db, 11, 3000)
	repo := postgres.New(db)
	emb := embed.NewBuiltin(embed.DefaultDim)
	svc := newBenchService(db)

	// The subtree r.a0 is leaves 0–99.
	for _, bad := range []struct{ tenant, path string }{
		{benchTen, "r.a0'; DROP TABLE x; --"}, {benchTen, ""}, {benchTen, "r..a0"}, {benchTen, strings.Repeat("a.", 3000) + "a"},
		{"ten'x", "r.a0"}, {"", "r.a0"},
	} {
		if _, err := svc.BuildSubtreeIndex(ctx, bad.tenant, bad.path); !errs.Is(err, errs.Validation) {
			t.Fatalf("building for %.20q, %.20q: %v", bad.tenant, bad.path, err)
		}
		if _, err := svc.DropSubtreeIndex(ctx, bad.tenant, bad.path); !errs.Is(err, errs.Validation) {
			t.Fatalf("dropping for %.20q, %.20q: %v", bad.tenant, bad.path, err)
		}
		if got, _, err := repo.SubtreeIndex(ctx, bad.tenant, emb.Model(), bad.path); got != "" || err != nil {
			t.Fatalf("looking up %.20q, %.20q: %q, %v", bad.tenant, bad.path, got, err)
		}
	}
	built, err := svc.BuildSubtreeIndex(ctx, benchTen, "r.a0")
	if err != nil {
		t.Fatal(err)
	}
	if !built.Built || built.IDPath != "r.a0" || built.Name != postgres.SubtreeIndexName(benchTen, emb.Model(), "r.a0") || built.Bytes == 0 {
		t.Fatalf("built %+v", built)
	}
	again, err := svc.BuildSubtreeIndex(ctx, benchTen, "r.a0")
	if err != nil || again.Built {
		t.Fatalf("built again: %+v, %v", again, err)
	}
	if listed, err := svc.ListSubtreeIndexes(ctx, benchTen); err != nil || len(listed) != 1 || listed[0].Name != built.Name ||
		!listed[0].Valid || !strings.Contains(listed[0].Predicate, "'r.a0'::ltree") {
		t.Fatalf("listed: %+v, %v", listed, err)
	}
	if listed, err := svc.ListSubtreeIndexes(ctx, "ten_other"); err != nil || len(listed) != 0 {
		t.Fatalf("another tenant's list: %+v, %v", listed, err)
	}
	for scope, want := range map[string]string{"r.a0": "r.a0", "r.a0.b3": "r.a0", "r.a0.b3.c4": "r.a0", "r": "", "r.a1.b0": "", "x.y": ""} {
		got, rows, err := repo.SubtreeIndex(ctx, benchTen, emb.Model(), scope)
		if err != nil || got != want {
			t.Errorf("subtree index for %s: %q, %v; want %q", scope, got, err, want)
		}
		if wantRows, _ := repo.Reachable(ctx, benchTen, app.Filter{Scope: want, Allow: []string{want}}); want != "" && rows != wantRows {
			t.Errorf("subtree index for %s: %d rows, want %d", scope, rows, wantRows)
		}
		if got, _, _ := repo.SubtreeIndex(ctx, "ten_other", emb.Model(), scope); got != "" {
			t.Errorf("another tenant's subtree index for %s: %q", scope, got)
		}
	}

	// Copies of an entry under r.a0 that no search may return.
	in := slices.IndexFunc(l.leaves, func(leaf int) bool { return leaf < 100 })
	art := fmt.Sprintf("art_%08d", in)
	forbidden := []string{"oth_00000001", "steer_00000001", "sim_00000001"}
	if _, err := db.Pool.Exec(ctx, `
INSERT INTO retrieval.entries (tenant_id, artifact_id, workarea_id, workarea_id_path, kind, claim_key, version, text, tsv, embedding, embedding_model, promoted_at, simulation_id)
SELECT x.tenant, x.id, e.workarea_id, e.workarea_id_path, x.kind, e.claim_key, 1, e.text, e.tsv, e.embedding, e.embedding_model, e.promoted_at, x.sim
FROM retrieval.entries e, (VALUES ('ten_other', 'oth_00000001', 'memory', NULL), ($1, 'steer_00000001', 'steering', NULL),
    ($1, 'sim_00000001', 'memory', 'sim_elsewhere')) AS x(tenant, id, kind, sim)
WHERE e.tenant_id = $1 AND e.artifact_id = $2`, benchTen, art); err != nil {
		t.Fatal(err)
	}
	vecs, err := emb.Embed(ctx, embed.Query, []string{l.texts[in]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	walks := func(ctx context.Context, name string) int64 {
		var n int64
		if err := db.Conn(ctx).QueryRow(ctx, `SELECT pg_stat_get_xact_numscans(to_regclass('retrieval.' || $1))`, name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, f := range []app.Filter{
		{Scope: "r.a0", Allow: []string{"r"}},
		{Scope: "r.a0.b0", Allow: []string{"r"}},
		{Scope: "r.a0", Allow: []string{"r"}, Deny: []string{leaf(l.leaves[in])}},
		{Scope: "r.a0", Allow: []string{"r.a0.b0", "r.a0.b1"}},
	} {
		err := db.InSnapshot(ctx, func(ctx context.Context) error {
			sub0, whole0 := walks(ctx, built.Name), walks(ctx, builtinIndex)
			s := domain.Search{Method: domain.Overfetch, Candidates: 200, Subtree: "r.a0"}
			got, err := repo.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vecs[0], f, 20, s)
			if err != nil {
				return err
			}
			if n := walks(ctx, built.Name) - sub0; n != 1 {
				t.Errorf("%+v: the subtree index walked %d times, want 1", f, n)
			}
			if n := walks(ctx, builtinIndex) - whole0; n != 0 {
				t.Errorf("%+v: the model's whole index walked %d times, want 0", f, n)
			}
			want, err := repo.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vecs[0], f, 20, domain.Search{Method: domain.Exact})
			if err != nil {
				return err
			}
			if len(got) == 0 || len(want) == 0 || got[0] != want[0] {
				t.Errorf("%+v: subtree walk %v, exact %v", f, got, want)
			}
			inFilter(ctx, t, db, f, got, forbidden)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	// Recall plans the subtree's index for scopes inside it whose rows an
	// exact scan would not handle cheaply, and answers from the scope.
	plan := func(scope string, reach int64) domain.Search {
		t.Helper()
		var res app.VectorResult
		err := db.InSnapshot(ctx, func(ctx context.Context) error {
			var err error
			res, err = svc.VectorLeg(ctx, benchTen, app.Leg{Query: domain.Query{Text: c.query(l.texts[in]), Scope: scope, K: 10},
				Corpus: domain.Corpus{Docs: 3000, AllDocs: 3000}, Reach: reach, Filter: app.Filter{Scope: scope, Allow: []string{"r"}}})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range res.IDs {
			if slices.Contains(forbidden, id) || !strings.HasPrefix(id, "art_") {
				t.Errorf("recall in %s returned %s", scope, id)
			}
		}
		return res.Plan
	}
	if got := plan("r.a0", domain.ExactThreshold+1); got.Subtree != "r.a0" || got.Method != domain.Overfetch {
		t.Errorf("plan in r.a0: %v, want an overfetch in r.a0", got)
	}
	if got := plan("r.a0", 300); got.Method != domain.Exact {
		t.Errorf("plan for 30 rows: %v, want exact", got)
	}
	// Another server remembers the index for a minute after it is
	// dropped: its walks then find no index to walk, and still return only
	// what the filter admits.
	stale := postgres.New(db)
	if got, _, _ := stale.SubtreeIndex(ctx, benchTen, emb.Model(), "r.a0"); got != "r.a0" {
		t.Fatalf("lookup before the drop: %q", got)
	}
	dropped, err := svc.DropSubtreeIndex(ctx, benchTen, "r.a0")
	if err != nil || !dropped.Dropped || dropped.Name != built.Name {
		t.Fatalf("drop: %+v, %v", dropped, err)
	}
	if got, _, _ := stale.SubtreeIndex(ctx, benchTen, emb.Model(), "r.a0"); got != "r.a0" {
		t.Fatalf("a remembered lookup: %q", got)
	}
	for _, f := range []app.Filter{{Scope: "r.a0", Allow: []string{"r"}}, {Scope: "r.a0", Allow: []string{"r.a0.b0", "r.a0.b1"}}} {
		got, err := stale.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vecs[0], f, 20, domain.Search{Method: domain.Overfetch, Candidates: 200, Subtree: "r.a0"})
		if err != nil {
			t.Fatalf("a walk of a dropped index: %v", err)
		}
		inFilter(ctx, t, db, f, got, forbidden)
	}
	if got := plan("r.a0", domain.ExactThreshold+1); got.Subtree != "" {
		t.Errorf("plan after the drop: %v", got)
	}
	if dropped, err := svc.DropSubtreeIndex(ctx, benchTen, "r.a0"); err != nil || dropped.Dropped {
		t.Fatalf("drop again: %+v, %v", dropped, err)
	}
}

// inFilter fails the test unless every id is one of the tenant's own
// memories (no steering row, no simulation's) under the filter's scope,
// under one of its allowed subtrees and under none of its denied ones, and
// none of forbidden.
func inFilter(ctx context.Context, t *testing.T, db *pg.DB, f app.Filter, ids, forbidden []string) {
	t.Helper()
	under := func(path, root string) bool { return path == root || strings.HasPrefix(path, root+".") }
	for _, id := range ids {
		if slices.Contains(forbidden, id) {
			t.Errorf("%+v: returned %s", f, id)
			continue
		}
		var tenant, kind, path string
		var sim *string
		if err := db.Pool.QueryRow(ctx, `SELECT tenant_id, kind, workarea_id_path::text, simulation_id FROM retrieval.entries WHERE artifact_id = $1`, id).Scan(&tenant, &kind, &path, &sim); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		allowed := slices.ContainsFunc(f.Allow, func(a string) bool { return under(path, a) })
		denied := slices.ContainsFunc(f.Deny, func(d string) bool { return under(path, d) })
		if tenant != benchTen || kind == "steering" || sim != nil || !under(path, f.Scope) || !allowed || denied {
			t.Errorf("%+v: returned %s (%s, %s, %s, simulation %v)", f, id, tenant, kind, path, sim)
		}
	}
}
