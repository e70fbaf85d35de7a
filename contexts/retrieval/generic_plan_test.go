package retrieval

import (
	"context"
	"net/url"
	"slices"
	"testing"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/domain"
	"github.com/omlhub/oml/contexts/retrieval/internal/embed"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

// openInPlanMode opens a pool of one connection, so that every call after
// the first reuses its prepared statements, whose session runs with
// plan_cache_mode set to mode.
func openInPlanMode(t *testing.T, base, mode string) *pg.DB {
	t.Helper()
	return openWithSetting(t, base, "plan_cache_mode", mode)
}

// openWithSetting opens a pool of one connection whose session runs with
// the setting name at value.
func openWithSetting(t *testing.T, base, name, value string) *pg.DB {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	db, err := pg.Open(context.Background(), u.String(), pg.Options{MaxConns: 1, ApplicationName: "oml-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	var got string
	if err := db.Pool.QueryRow(context.Background(), "SELECT current_setting($1)", name).Scan(&got); err != nil || got != value {
		t.Fatalf("%s %q (%v), want %q", name, got, err, value)
	}
	return db
}

// TestReachableUnderEitherPlan pins the filter of SubtreeCount, whose
// parameter casts are scalar subqueries (InitPlans, computed once per
// execution): planned for its values or as the prepared statement's
// generic plan from its first run, it counts the same rows — inside the
// scope and the allow list, outside the deny list, of this tenant only.
func TestReachableUnderEitherPlan(t *testing.T) {
	ctx := context.Background()
	base := pgtest.NewURL(t)
	counts := []struct {
		tenant, id, path string
		n                int
	}{
		{"ten_a", "wa_r", "r", 1},
		{"ten_a", "wa_a", "r.a", 3},
		{"ten_a", "wa_ax", "r.a.x", 5},
		{"ten_a", "wa_b", "r.b", 7},
		{"ten_b", "wb_a", "r.a", 100}, // another tenant's, same path
	}
	cases := []struct {
		f    app.Filter
		want int64
	}{
		{app.Filter{Scope: "r", Allow: []string{"r"}}, 16},
		{app.Filter{Scope: "r", Allow: []string{"r"}, Deny: []string{"r.a"}}, 8},
		{app.Filter{Scope: "r", Allow: []string{"r.a", "r.b"}, Deny: []string{"r.a.x"}}, 10},
		{app.Filter{Scope: "r.a", Allow: []string{"r"}}, 8},
		{app.Filter{Scope: "r.a", Allow: []string{"r.b"}}, 0},
		{app.Filter{Scope: "r", Allow: []string{}}, 0},
		{app.Filter{Scope: "r.zz", Allow: []string{"r"}}, 0},
	}
	for i, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		db := openInPlanMode(t, base, mode)
		if i == 0 {
			for _, c := range counts {
				if _, err := db.Pool.Exec(ctx, `INSERT INTO retrieval.workarea_counts (tenant_id, workarea_id, id_path, n) VALUES ($1, $2, $3::text::ltree, $4)`,
					c.tenant, c.id, c.path, c.n); err != nil {
					t.Fatal(err)
				}
			}
		}
		repo := postgres.New(db)
		for round := range 3 {
			for _, c := range cases {
				got, err := repo.Reachable(ctx, "ten_a", c.f)
				if err != nil {
					t.Fatalf("%s, round %d, %+v: %v", mode, round, c.f, err)
				}
				if got != c.want {
					t.Errorf("%s, round %d, %+v: reachable %d, want %d", mode, round, c.f, got, c.want)
				}
			}
		}
	}
}

// TestLegsRunGenericAndLeaveThePlanModeAsFound pins how the legs whose
// SQL fixes their plan run: the full-text leg lexemes first for a tenant
// holding most entries (Generic), the exact scan of the scope index and
// the overfetch are planned once and run under their generic plans on a
// connection (pg_prepared_statements counts them), and every leg leaves
// plan_cache_mode as it found it — the session's value, or one a
// transaction set — so that the unnamed statements after it (scope first,
// a filtered search) are still planned for their values. A recall runs
// its legs outside any transaction (the last round); a leg may also run
// inside a caller's (the first three).
func TestLegsRunGenericAndLeaveThePlanModeAsFound(t *testing.T) {
	ctx := context.Background()
	base := pgtest.NewURL(t)
	emb := embed.NewBuiltin(embed.DefaultDim)
	vec, err := emb.Embed(ctx, embed.Query, []string{"boundary layer"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := app.Filter{Scope: "r", Allow: []string{"r"}, Deny: []string{"r.x"}}
	ft := domain.FullTextQuery{TSQuery: "'boundari' | 'layer'", Lexemes: []string{"boundari", "layer"}, IDF: []float64{1, 1}, AvgLen: 10, Generic: true}
	for _, mode := range []string{"auto", "force_custom_plan"} {
		db := openInPlanMode(t, base, mode)
		repo := postgres.New(db)
		legs := []struct {
			name string
			run  func(ctx context.Context) error
		}{
			{"full text, lexemes first", func(ctx context.Context) error {
				_, _, err := repo.FullText(ctx, "ten_a", ft, f, 32, app.Vectors{})
				return err
			}},
			{"full text, lexemes first, planned for its values", func(ctx context.Context) error {
				lf := ft
				lf.Generic = false
				_, _, err := repo.FullText(ctx, "ten_a", lf, f, 32, app.Vectors{})
				return err
			}},
			{"full text, scope in the index", func(ctx context.Context) error {
				in := ft
				in.ScopeInIndex = true
				_, _, err := repo.FullText(ctx, "ten_a", in, f, 32, app.Vectors{})
				return err
			}},
			{"full text, scope in the index, planned for its values", func(ctx context.Context) error {
				in := ft
				in.ScopeInIndex, in.Generic = true, false
				_, _, err := repo.FullText(ctx, "ten_a", in, f, 32, app.Vectors{})
				return err
			}},
			{"full text, scope first", func(ctx context.Context) error {
				sf := ft
				sf.ScopeFirst, sf.Generic = true, false
				_, _, err := repo.FullText(ctx, "ten_a", sf, f, 32, app.Vectors{})
				return err
			}},
			{"exact", func(ctx context.Context) error {
				_, err := repo.Vector(ctx, "ten_a", emb.Model(), emb.Dim(), vec[0], f, 32, domain.Search{Method: domain.Exact})
				return err
			}},
			{"overfetch", func(ctx context.Context) error {
				_, err := repo.Vector(ctx, "ten_a", emb.Model(), emb.Dim(), vec[0], f, 32, domain.Search{Method: domain.Overfetch, Candidates: 100})
				return err
			}},
			{"filtered", func(ctx context.Context) error {
				_, err := repo.Vector(ctx, "ten_a", emb.Model(), emb.Dim(), vec[0], f, 32, domain.Search{Method: domain.Filtered})
				return err
			}},
		}
		for _, leg := range legs {
			for round := range 4 {
				check := func(ctx context.Context) error {
					// The third time, the transaction has a mode of its own.
					want := mode
					if round == 2 {
						want = "force_custom_plan"
						if _, err := db.Conn(ctx).Exec(ctx, "SET LOCAL plan_cache_mode = force_custom_plan"); err != nil {
							return err
						}
					}
					if err := leg.run(ctx); err != nil {
						return err
					}
					var got string
					if err := db.Conn(ctx).QueryRow(ctx, "SHOW plan_cache_mode").Scan(&got); err != nil {
						return err
					}
					if got != want {
						t.Errorf("session %s, round %d: after the %s leg, plan_cache_mode %s, want %s", mode, round, leg.name, got, want)
					}
					return nil
				}
				var err error
				if round == 3 {
					err = check(ctx) // the pool's one connection, no transaction
				} else {
					err = db.InSnapshot(ctx, check)
				}
				if err != nil {
					t.Fatalf("session %s, %s leg: %v", mode, leg.name, err)
				}
			}
		}
		var generic int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements
WHERE generic_plans >= 3 AND custom_plans = 0 AND statement LIKE 'SELECT artifact_id,%'`).Scan(&generic); err != nil {
			t.Fatal(err)
		}
		if generic != 4 {
			t.Errorf("session %s: %d legs ran three times under a generic plan, want 4 (full text lexemes first and scope in the index, exact, overfetch)", mode, generic)
		}
	}
}

// TestFullTextFormsReadTheSameRows runs the full-text leg in its five
// forms — scope first, lexemes first planned for its values, lexemes
// first under a generic plan with its tenant and scope tests hidden, and
// the scope in the full-text index, planned or generic —
// over rows it must pass over: another tenant's with the same workarea
// path and words, a steering row, a simulation's row outside the caller's
// fence, a denied subtree's and one outside the scope. Each form returns
// the same rows, the allowed ones, on every run of a reused connection.
func TestFullTextFormsReadTheSameRows(t *testing.T) {
	ctx := context.Background()
	db := openInPlanMode(t, pgtest.NewURL(t), "auto")
	if _, err := db.Pool.Exec(ctx, `
INSERT INTO retrieval.entries (tenant_id, artifact_id, workarea_id, workarea_id_path, kind, claim_key, version, text, tsv, promoted_at, simulation_id, embedding, embedding_model)
SELECT x.tenant, x.id, x.wa, x.path::ltree, x.kind, x.id, 1, 'the boundary layer', to_tsvector('english', 'the boundary layer'), now(), x.sim, x.emb::halfvec, x.model
FROM (VALUES
    ('ten_a', 'in_1', 'wa_r', 'r', 'memory', NULL, '[1,0,0]', 'm1'),
    ('ten_a', 'in_2', 'wa_ra', 'r.a', 'memory', NULL, '[0,1,0]', 'm1'),
    ('ten_a', 'in_3', 'wa_ra', 'r.a', 'memory', NULL, '[0,0,1]', 'm2'),
    ('ten_a', 'denied', 'wa_rx', 'r.x', 'memory', NULL, '[1,1,0]', 'm1'),
    ('ten_a', 'outside', 'wa_s', 's', 'memory', NULL, '[1,1,0]', 'm1'),
    ('ten_a', 'steer', 'wa_r', 'r', 'steering', NULL, '[1,1,0]', 'm1'),
    ('ten_a', 'sim', 'wa_r', 'r', 'memory', 'sim_elsewhere', '[1,1,0]', 'm1'),
    ('ten_b', 'theirs', 'wa_r', 'r', 'memory', NULL, '[1,1,0]', 'm1')) AS x(tenant, id, wa, path, kind, sim, emb, model)`); err != nil {
		t.Fatal(err)
	}
	repo := postgres.New(db)
	f := app.Filter{Scope: "r", Allow: []string{"r", "s"}, Deny: []string{"r.x"}}
	base := domain.FullTextQuery{TSQuery: "'boundari' | 'layer'", Lexemes: []string{"boundari", "layer"}, IDF: []float64{1, 1}, AvgLen: 2}
	forms := map[string]domain.FullTextQuery{}
	forms["scope first"] = func() domain.FullTextQuery { q := base; q.ScopeFirst = true; return q }()
	forms["lexemes first"] = base
	forms["lexemes first, generic"] = func() domain.FullTextQuery { q := base; q.Generic = true; return q }()
	forms["scope in the index"] = func() domain.FullTextQuery { q := base; q.ScopeInIndex = true; return q }()
	forms["scope in the index, generic"] = func() domain.FullTextQuery { q := base; q.ScopeInIndex, q.Generic = true, true; return q }()
	// Equal scores: the rows come in id order.
	want := []string{"in_1", "in_2", "in_3"}
	// The best rows' vectors under the model asked for, in rank order;
	// in_3's model is another.
	vectors := map[app.Vectors][][]float32{
		{}:                   nil,
		{N: 1, Model: "m1"}:  {{1, 0, 0}},
		{N: 2, Model: "m1"}:  {{1, 0, 0}, {0, 1, 0}},
		{N: 10, Model: "m1"}: {{1, 0, 0}, {0, 1, 0}},
		{N: 10, Model: "m2"}: {{0, 0, 1}},
		{N: 2, Model: "m2"}:  nil,
		{N: 3, Model: "m3"}:  nil,
	}
	for name, q := range forms {
		for round := range 7 { // past the five custom plans Postgres tries first
			for ask, wantVecs := range vectors {
				got, vecs, err := repo.FullText(ctx, "ten_a", q, f, 32, ask)
				if err != nil {
					t.Fatalf("%s, round %d, %+v: %v", name, round, ask, err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s, round %d, %+v: %v, want %v", name, round, ask, got, want)
				}
				if !slices.EqualFunc(vecs, wantVecs, slices.Equal) {
					t.Fatalf("%s, round %d, %+v: vectors %v, want %v", name, round, ask, vecs, wantVecs)
				}
			}
		}
		// A scope below the root, and the root with only r.a allowed:
		// r.a's prefix, not the root's, selects; none when scope and
		// allowed subtrees do not meet.
		for _, nf := range []struct {
			f    app.Filter
			want []string
		}{
			{app.Filter{Scope: "r.a", Allow: []string{"r"}, Deny: []string{"r.x"}}, []string{"in_2", "in_3"}},
			{app.Filter{Scope: "r", Allow: []string{"r.a", "r.x"}, Deny: []string{"r.x"}}, []string{"in_2", "in_3"}},
			{app.Filter{Scope: "r.a", Allow: []string{"s", "r.ab"}}, nil},
		} {
			for round := range 7 {
				got, _, err := repo.FullText(ctx, "ten_a", q, nf.f, 32, app.Vectors{})
				if err != nil {
					t.Fatalf("%s, %+v, round %d: %v", name, nf.f, round, err)
				}
				if !slices.Equal(got, nf.want) {
					t.Fatalf("%s, %+v, round %d: %v, want %v", name, nf.f, round, got, nf.want)
				}
			}
		}
	}
}

// TestFilteredSearchHoldsItsWalkSettings pins that a filtered search,
// which a recall runs in no unit of work, walks the HNSW index with its
// iterative scan: without it the walk stops at ef_search candidates,
// almost none of them in a 1 % scope. Outside a transaction and inside
// one, it returns every row of the scope, as the exact scan does, and a
// connection's settings are as they were after it.
func TestFilteredSearchHoldsItsWalkSettings(t *testing.T) {
	ctx := context.Background()
	base := pgtest.NewURL(t)
	c, _ := indexedCorpus(ctx, t, openWithSetting(t, base, "application_name", "oml-test"), 7, 3000)
	// With sorts priced out the filtered search walks the index, as it
	// does over a large corpus, rather than sorting the scope's rows.
	db := openWithSetting(t, base, "enable_sort", "off")
	repo := postgres.New(db)
	emb := embed.NewBuiltin(embed.DefaultDim)
	vec, err := emb.Embed(ctx, embed.Query, []string{c.query(c.text())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := app.Filter{Scope: "r.a0.b3", Allow: []string{"r"}}
	exact, err := repo.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vec[0], f, 64, domain.Search{Method: domain.Exact})
	if err != nil {
		t.Fatal(err)
	}
	if len(exact) < 10 || len(exact) >= 64 {
		t.Fatalf("the exact scan found %d rows in the scope; the test wants between 10 and 63", len(exact))
	}
	slices.Sort(exact)
	search := func(ctx context.Context) error {
		got, err := repo.Vector(ctx, benchTen, emb.Model(), emb.Dim(), vec[0], f, 64, domain.Search{Method: domain.Filtered})
		if err != nil {
			return err
		}
		slices.Sort(got)
		if !slices.Equal(got, exact) {
			t.Errorf("filtered search (in a unit of work: %v): %d rows, the exact scan %d", pg.InTxRequired(ctx) == nil, len(got), len(exact))
		}
		return nil
	}
	if err := search(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.InSnapshot(ctx, search); err != nil {
		t.Fatal(err)
	}
	var scan, ef string
	if err := db.Pool.QueryRow(ctx, "SELECT current_setting('hnsw.iterative_scan'), current_setting('hnsw.ef_search')").Scan(&scan, &ef); err != nil {
		t.Fatal(err)
	}
	if scan != "off" || ef != "40" {
		t.Errorf("after a filtered search a connection has hnsw.iterative_scan %s, ef_search %s", scan, ef)
	}
}
