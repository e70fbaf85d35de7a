package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/attachments"
	"github.com/omlhub/oml/platform/config"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

// benchEnv is one server on one pool, shared by every sub-benchmark so the
// targets are measured in the same run, on the same pool.
type benchEnv struct {
	db            *pg.DB
	app           *app
	srv           *httptest.Server
	adminKey      string
	key           string // the writer's
	writerKeyID   string
	reviewerKey   string
	reviewerKeyID string
	workarea      string
	seeded        bool   // seedRecall ran
	searchKey     string // searchCorpus ran: the searcher's token
}

var (
	benchOnce sync.Once
	bench     *benchEnv
	benchErr  error
)

func setupBench(b *testing.B) *benchEnv {
	benchOnce.Do(func() { bench, benchErr = newBenchEnv(b) })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return bench
}

func newBenchEnv(b testing.TB) (*benchEnv, error) {
	ctx := context.Background()
	tuneGC(os.Getenv) // as serve does
	url := pgtest.NewURL(b)
	// The pool's size may be set as for oml-server (OML_DB_MAX_CONNS).
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"OML_DATABASE_URL": url, "OML_DB_MAX_CONNS": os.Getenv("OML_DB_MAX_CONNS")}[k]
	})
	if err != nil {
		return nil, err
	}
	db, err := pg.Open(ctx, url, pg.Options{MaxConns: cfg.DBMaxConns})
	if err != nil {
		return nil, err
	}
	// Access logs are formatted as in production, then discarded.
	_, signing, err := ed25519.GenerateKey(nil)
	if err != nil {
		return nil, err
	}
	master := make([]byte, 32)
	_, _ = rand.Read(master)
	store, err := attachments.OpenStore(ctx, "file://"+b.TempDir(), os.Getenv)
	if err != nil {
		return nil, err
	}
	a, err := assemble(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)), keys{signing: signing, masterKeys: masterKeys{master: master}}, store)
	if err != nil {
		return nil, err
	}
	boot, err := a.access.Bootstrap(ctx, "bench")
	if err != nil {
		return nil, err
	}
	// The baseline: a bare chi handler doing SELECT 1 on the same pool.
	r := chi.NewRouter()
	r.Get("/bench/select1", func(w http.ResponseWriter, r *http.Request) {
		var one int
		if err := db.Pool.QueryRow(r.Context(), "SELECT 1").Scan(&one); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"one":1}`))
	})
	r.Mount("/", a.handler)
	env := &benchEnv{db: db, app: a, srv: httptest.NewServer(r), key: boot.AdminKey, adminKey: boot.AdminKey}

	// A realistic node: universe.procurement.metals-crew with a crew record
	// and a child, read by a writer key whose grants sit two levels up.
	for _, body := range []string{
		`{"parent":"universe","name":"procurement"}`,
		`{"parent":"universe.procurement","name":"metals-crew","status":"committed","crew":{"name":"metals-crew"}}`,
		`{"parent":"universe.procurement.metals-crew","name":"q1-2027"}`,
	} {
		if err := env.call("POST", "/v1/workareas", body, nil); err != nil {
			return nil, err
		}
	}
	writer, writerID, err := env.issue("bench-writer", "writer", "reader", "writer")
	if err != nil {
		return nil, err
	}
	reviewer, reviewerID, err := env.issue("bench-reviewer", "dreamer", "reader", "dreamer.review")
	if err != nil {
		return nil, err
	}
	env.key, env.reviewerKey, env.writerKeyID, env.reviewerKeyID = writer, reviewer, writerID, reviewerID
	var crew struct {
		ID string `json:"id"`
	}
	if err := env.call("GET", "/v1/workareas/universe.procurement.metals-crew", "", &crew); err != nil {
		return nil, err
	}
	env.workarea = crew.ID
	return env, nil
}

// issue makes a key with grants on universe.procurement and returns its
// token and id.
func (e *benchEnv) issue(principal, role string, scopes ...string) (string, string, error) {
	var issued struct {
		KeyID string `json:"key_id"`
		Token string `json:"token"`
	}
	if err := e.call("POST", "/v1/keys", fmt.Sprintf(`{"principal":%q,"role":%q}`, principal, role), &issued); err != nil {
		return "", "", err
	}
	for _, scope := range scopes {
		body := fmt.Sprintf(`{"key_id":%q,"workarea":"universe.procurement","scope":%q,"effect":"allow"}`, issued.KeyID, scope)
		if err := e.call("POST", "/v1/grants", body, nil); err != nil {
			return "", "", err
		}
	}
	return issued.Token, issued.KeyID, nil
}

// call sends a request with the admin key until setup ends, then the
// writer's.
func (e *benchEnv) call(method, path, body string, out any) error {
	return e.callAs(e.key, method, path, body, out)
}

func (e *benchEnv) callAs(key, method, path, body string, out any) error {
	req, _ := http.NewRequest(method, e.srv.URL+path, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil && len(b) > 0 { // 204 leaves out untouched
		return json.Unmarshal(b, out)
	}
	return nil
}

// benchTargets are measured in this order at each concurrency.
var benchTargets = []string{"select1", "http", "mcp"}

// BenchmarkWorkareaInfo measures oml_workarea_info over MCP and
// GET /v1/workareas/{id} over HTTP beside a bare SELECT 1 handler on the
// same pool, at concurrency 1 and 32. The load comes from a separate
// process (this test binary re-executed as a load generator), so client
// goroutines do not share the server's scheduler. Run with a fixed count:
//
//	go test -run '^$' -bench WorkareaInfo -benchtime 3000x ./cmd/oml-server
func BenchmarkWorkareaInfo(b *testing.B) {
	e := setupBench(b)
	for _, c := range []int{1, 32} {
		for _, target := range benchTargets {
			b.Run(fmt.Sprintf("target=%s/c=%d", target, c), func(b *testing.B) {
				e.load(b, loadSpec{Target: target, Concurrency: c, Warmup: 100})
			})
		}
	}
}

// load runs the load generator for b.N operations and reports its numbers.
func (e *benchEnv) load(b *testing.B, spec loadSpec) {
	spec.N = b.N
	b.ResetTimer()
	res := e.run(b, spec)
	b.StopTimer()
	b.ReportMetric(res.RPS, "req/s")
	b.ReportMetric(res.P50ms, "p50-ms")
	b.ReportMetric(res.P99ms, "p99-ms")
	b.ReportMetric(res.CPUms, "cpu-ms/op")
	b.ReportMetric(res.StealMs, "steal-ms/op")
}

// run runs the load generator for spec (spec.N operations) and returns
// what it measured.
func (e *benchEnv) run(b *testing.B, spec loadSpec) loadResult {
	spec.Key, spec.ReviewerKey, spec.Workarea = e.key, e.reviewerKey, e.workarea
	if spec.URL == "" {
		spec.URL = e.srv.URL
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OML_BENCH_LOADGEN="+string(raw))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("load generator: %v", err)
	}
	var res loadResult
	if err := json.Unmarshal(out, &res); err != nil {
		b.Fatalf("load generator output %q: %v", out, err)
	}
	return res
}
