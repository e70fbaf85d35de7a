package retrieval_test

import (
	"context"
	"slices"
	"testing"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres"
	"github.com/omlhub/oml/platform/pgtest"
	"github.com/omlhub/oml/platform/scope"
)

// TestHitsAndSteering pins the statement that loads a recall's hits and
// its steering rows together: steering of the scope, its ancestors and its
// subtree only, as the allow, deny and simulation fence admit, of the
// caller's tenant, by path depth then promotion time, at most the limit;
// hits only of the tenant, an unknown id left out.
func TestHitsAndSteering(t *testing.T) {
	ctx := context.Background()
	db := pgtest.New(t)
	if _, err := db.Pool.Exec(ctx, `
INSERT INTO retrieval.entries (tenant_id, artifact_id, workarea_id, workarea_id_path, kind, claim_key, version, text, tsv, promoted_at, simulation_id)
SELECT x.tenant, x.id, 'wa_' || x.id, x.path::ltree, x.kind, x.id, 1, 'text of ' || x.id, to_tsvector('simple', x.id),
    '2026-12-01T00:00:00Z'::timestamptz + x.minute * interval '1 minute', x.sim
FROM (VALUES
    ('ten_a', 's_ab', 'r.a.b', 'steering', 0, NULL),
    ('ten_a', 's_a_old', 'r.a', 'steering', 1, NULL),
    ('ten_a', 's_a_new', 'r.a', 'steering', 2, NULL),
    ('ten_a', 's_root', 'r', 'steering', 3, NULL),
    ('ten_a', 's_sim_mine', 'r.a', 'steering', 4, 'sim_mine'),
    ('ten_a', 's_sim_other', 'r.a', 'steering', 5, 'sim_other'),
    ('ten_a', 's_sibling', 'r.x', 'steering', 6, NULL),
    ('ten_a', 's_denied', 'r.a.d', 'steering', 7, NULL),
    ('ten_a', 's_unreadable', 's', 'steering', 8, NULL),
    ('ten_b', 's_theirs', 'r.a', 'steering', 9, NULL),
    ('ten_a', 'm_1', 'r.a', 'memory', 10, NULL),
    ('ten_a', 'm_2', 'r.a.b', 'memory', 11, NULL),
    ('ten_b', 'm_theirs', 'r.a', 'memory', 12, NULL)) AS x(tenant, id, path, kind, minute, sim)`); err != nil {
		t.Fatal(err)
	}
	repo := postgres.New(db)
	steer := app.Filter{Scope: "r.a", Allow: []string{"r"}, Deny: []string{"r.a.d"}, Fence: scope.Fence{"sim_mine"}}
	for _, c := range []struct {
		ids      []string
		limit    int
		hits     []string
		steering []string
	}{
		{[]string{"m_2", "m_1", "m_theirs", "art_unknown", "m_1"}, 20, []string{"m_1", "m_2"}, []string{"s_root", "s_a_old", "s_a_new", "s_sim_mine", "s_ab"}},
		{nil, 3, nil, []string{"s_root", "s_a_old", "s_a_new"}},
		{[]string{"m_1"}, 0, []string{"m_1"}, nil},
	} {
		hits, steering, err := repo.HitsAndSteering(ctx, "ten_a", c.ids, steer, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		var gotHits, gotSteering []string
		for _, e := range hits {
			if e.TenantID != "ten_a" || e.Text != "text of "+e.ArtifactID {
				t.Fatalf("hit %+v", e)
			}
			gotHits = append(gotHits, e.ArtifactID)
		}
		for _, e := range steering {
			gotSteering = append(gotSteering, e.ArtifactID)
		}
		slices.Sort(gotHits)
		if !slices.Equal(gotHits, c.hits) || !slices.Equal(gotSteering, c.steering) {
			t.Errorf("ids %v, limit %d: hits %v, steering %v; want %v, %v", c.ids, c.limit, gotHits, gotSteering, c.hits, c.steering)
		}
	}
	// A caller whose allow list does not reach the ancestors sees only
	// what it reads (and, without the deny, r.a.d's row).
	_, steering, err := repo.HitsAndSteering(ctx, "ten_a", nil, app.Filter{Scope: "r.a", Allow: []string{"r.a"}}, 20)
	var got []string
	for _, e := range steering {
		got = append(got, e.ArtifactID)
	}
	if want := []string{"s_a_old", "s_a_new", "s_ab", "s_denied"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("steering reading r.a only: %v, %v; want %v", got, err, want)
	}
}
