package retrieval

import (
	"context"
	"net/url"
	"testing"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

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
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("plan_cache_mode", mode)
		u.RawQuery = q.Encode()
		// One connection, so every call after the first reuses its
		// prepared statement.
		db, err := pg.Open(ctx, u.String(), pg.Options{MaxConns: 1, ApplicationName: "oml-test"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		var got string
		if err := db.Pool.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&got); err != nil || got != mode {
			t.Fatalf("plan_cache_mode %q (%v), want %q", got, err, mode)
		}
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
