package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/omlhub/oml/contexts/attachments"
	"github.com/omlhub/oml/platform/config"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

// counter counts the statements the pool runs.
type counter struct{ n atomic.Int64 }

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A serve costs a constant number of statements however many queued items
// it must pass over, in however many workareas, with however much lineage:
// the reviewer wrote the oldest 16 (a whole candidate batch, each
// ineligible under R2, spread over four workareas, each deriving from the
// one before) and is served the 17th. Logged with -v for
// docs/BENCHMARKS.md; the bound is generous, the growth is the point.
func TestServeStatementCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewURL(t)
	cfg, err := config.Load(func(k string) string { return map[string]string{"OML_DATABASE_URL": url}[k] })
	if err != nil {
		t.Fatal(err)
	}
	var n counter
	db, err := pg.Open(ctx, url, pg.Options{MaxConns: 4, Tracer: &n})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, signing, _ := ed25519.GenerateKey(nil)
	store, err := attachments.OpenStore(ctx, "file://"+t.TempDir(), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	a, err := assemble(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)), keys{signing: signing, masterKeys: masterKeys{master: make([]byte, 32)}}, store)
	if err != nil {
		t.Fatal(err)
	}
	boot, err := a.access.Bootstrap(ctx, "stmt")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.handler)
	defer srv.Close()
	call := func(key, method, path string, body any, want int) map[string]any {
		t.Helper()
		var b []byte
		if body != nil {
			b, _ = json.Marshal(body)
		}
		req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, out)
		}
		return out
	}
	admin := boot.AdminKey
	call(admin, "POST", "/v1/workareas", map[string]any{"parent": "universe", "name": "crew", "status": "committed"}, 201)
	for i := range 4 {
		call(admin, "POST", "/v1/workareas", map[string]any{"parent": "universe.crew", "name": fmt.Sprintf("team-%d", i), "status": "committed"}, 201)
	}
	keyOf := func(name string) (string, string) {
		k := call(admin, "POST", "/v1/keys", map[string]any{"principal": name, "role": "dreamer"}, 201)
		for _, scope := range []string{"reader", "writer", "dreamer.review"} {
			call(admin, "POST", "/v1/grants", map[string]any{"key_id": k["key_id"], "workarea": "universe.crew", "scope": scope, "effect": "allow"}, 201)
		}
		return k["token"].(string), k["key_id"].(string)
	}
	reviewer, _ := keyOf("reviewer")
	writer, _ := keyOf("writer")
	var prev any
	for i := range 16 {
		body := map[string]any{"workarea": fmt.Sprintf("universe.crew.team-%d", i%4), "claim_key": fmt.Sprintf("own-%d", i), "text": "the reviewer's own"}
		if prev != nil {
			body["verb"], body["derives_from"] = "learn", []any{prev}
		}
		prev = call(reviewer, "POST", "/v1/memories", body, 201)["artifact_id"]
	}
	want := call(writer, "POST", "/v1/memories", map[string]any{"workarea": "universe.crew", "claim_key": "theirs", "text": "someone else's"}, 201)

	before := n.n.Load()
	got := call(reviewer, "POST", "/v1/reviews/serve", nil, 200)
	serve := n.n.Load() - before
	if item, _ := got["item"].(map[string]any); item["artifact_id"] != want["artifact_id"] {
		t.Fatalf("served %v, want %v", got["item"], want["artifact_id"])
	}
	before = n.n.Load()
	call(reviewer, "POST", "/v1/reviews/"+got["serve_id"].(string)+"/verdict", map[string]any{"verdict": "approve"}, 200)
	verdict := n.n.Load() - before
	t.Logf("statements: serve past 16 ineligible items in 4 workareas %d, verdict %d", serve, verdict)
	if serve > 30 {
		t.Errorf("a serve past 16 ineligible items ran %d statements; it should not grow with the candidates", serve)
	}
}
