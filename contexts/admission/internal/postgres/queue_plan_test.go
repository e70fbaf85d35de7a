package postgres

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/omlhub/oml/contexts/admission/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/pgtest"
)

// The review queue's page walks artifacts_held, the tenant's held items in
// submission order, and stops after the page, even in the plan a
// connection caches for every call (the generic plan) and for a tenant that
// holds nearly every held item. It once took artifacts_held_expiry there:
// every tenant's held items, read whole and sorted for each serve.
func TestQueuePageWalksTheTenantsHeldItemsInOrder(t *testing.T) {
	db := pgtest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// 1,000 held items of one tenant, 20 of another, analysed: a queue of
	// that size is where the planner chose wrong (from about 1,500 on it
	// chose artifacts_held).
	if _, err := db.Pool.Exec(ctx, `
		INSERT INTO admission.artifacts (tenant_id, id, workarea_id, workarea_id_path, claim_key, version, kind, verb,
			state, text, author_key_id, author_principal, envelope, signature, required_approvals, submitted_at, held_expires_at)
		SELECT CASE WHEN g <= 1000 THEN 'ten_big' ELSE 'ten_small' END, 'art_' || g, 'wa_1', 'wa_0.wa_1', 'k' || g, 1,
			'memory', 'remember', 'held', 'text', 'key_1', 'prn_1', '{}', '\x00', 1,
			now() - interval '1 hour' + g * interval '1 ms', now() + interval '7 days' + g * interval '1 ms'
		FROM generate_series(1, 1020) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, "ANALYZE admission.artifacts"); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	// The statement exactly as the repository sends it: the first call
	// prepares it on this connection.
	rows, err := dbsqlc.New().ArtifactsQueue(ctx, conn, dbsqlc.ArtifactsQueueParams{
		TenantID: "ten_big", Now: time.Now(), Allow: []string{"wa_0"}, Deny: []string{}, Skip: []string{},
		Principal: "prn_2", MaxRows: 16, Fence: []string{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 16 || rows[0].ID != "art_1" {
		t.Fatalf("page: %d rows, first %q; want 16 from art_1", len(rows), rows[0].ID)
	}
	var name string
	if err := conn.QueryRow(ctx, "SELECT name FROM pg_prepared_statements WHERE statement LIKE '-- name: ArtifactsQueue :many%'").Scan(&name); err != nil {
		t.Fatalf("the queue's prepared statement: %v", err)
	}
	var plan []byte
	if err := conn.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE "+pgx.Identifier{name}.Sanitize()+
		"('ten_big', now(), '{wa_0}', '{}', '{}', '{}', 'prn_2', 16)").Scan(&plan); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		nodes = append(nodes, strings.TrimSpace(n["Node Type"].(string)+" "+str(n["Index Name"])))
		if n["Index Name"] == "artifacts_held" && n["Actual Rows"].(float64) != 16 {
			t.Errorf("artifacts_held read %v rows for a page of 16", n["Actual Rows"])
		}
		for _, c := range asList(n["Plans"]) {
			walk(c)
		}
	}
	var top []map[string]any
	if err := json.Unmarshal(plan, &top); err != nil {
		t.Fatal(err)
	}
	walk(top[0]["Plan"].(map[string]any))
	got := strings.Join(nodes, ", ")
	if !strings.Contains(got, "Index Scan artifacts_held") || strings.Contains(got, "artifacts_held_expiry") || strings.Contains(got, "Sort") {
		t.Fatalf("the queue's generic plan is %s; want an ordered scan of artifacts_held and no sort", got)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func asList(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
