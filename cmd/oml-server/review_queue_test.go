package main

import (
	"context"
	"slices"
	"testing"

	"github.com/omlhub/oml/platform/migrate"
	"github.com/omlhub/oml/sql/migrations"
)

// The queue leaves out what a principal already judged, through any of
// its keys, from artifacts.judged_by (migration 0042), which a trigger on
// serves keeps and the migration fills from the verdicts given before it.
func TestQueueLeavesOutWhatAPrincipalJudged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newStmtEnv(t, nil)
	e.call(e.admin, "PUT", "/v1/workareas/universe.crew/review-policy", map[string]any{"required_approvals": 2, "held_ttl_seconds": 3600, "scan": "flag"}, 200)
	writer, first := e.keyOf("writer"), e.keyOf("reviewer-a")
	item := e.call(writer, "POST", "/v1/memories", map[string]any{"workarea": "universe.crew.team-0", "claim_key": "two", "text": "needs two approvals"}, 201)["artifact_id"]
	got := e.call(first, "POST", "/v1/reviews/serve", nil, 200)
	e.call(first, "POST", "/v1/reviews/"+got["serve_id"].(string)+"/verdict", map[string]any{"verdict": "approve"}, 200)

	judged := func() []string {
		t.Helper()
		var p []string
		if err := e.db.Pool.QueryRow(ctx, `SELECT judged_by FROM admission.artifacts WHERE id = $1`, item).Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var principal string
	if err := e.db.Pool.QueryRow(ctx, `SELECT reviewer_principal FROM admission.serves WHERE artifact_id = $1`, item).Scan(&principal); err != nil {
		t.Fatal(err)
	}
	if p := judged(); !slices.Equal(p, []string{principal}) {
		t.Fatalf("judged_by after the verdict = %v, want [%s]", p, principal)
	}

	// Migrate below 0042 and up again: the verdict given before it is
	// found.
	r, err := migrate.New(e.db.Pool, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := r.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if undone, err := r.Down(ctx, cur-41); err != nil || !slices.Contains(undone, 42) {
		t.Fatalf("down to 41: undid %v, %v", undone, err)
	}
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	e.db.Pool.Reset() // statements prepared against the old columns
	if p := judged(); !slices.Equal(p, []string{principal}) {
		t.Fatalf("judged_by after migrating again = %v, want [%s]", p, principal)
	}

	// Neither that key nor another of its principal is served the item
	// again; another principal is.
	for _, key := range []string{first, e.keyOf("reviewer-a")} {
		e.call(key, "POST", "/v1/reviews/serve", nil, 204)
	}
	second := e.keyOf("reviewer-b")
	if got := e.call(second, "POST", "/v1/reviews/serve", nil, 200); got["item"].(map[string]any)["artifact_id"] != item {
		t.Fatalf("the second reviewer was served %v", got["item"])
	}
}
