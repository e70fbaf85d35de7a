package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads /metrics and sums each family's samples whose labels
// contain match (name → label=value pairs; counters and gauges by value,
// histograms by count).
type scraped map[string]*dto.MetricFamily

// metricsToken is every test server's OML_METRICS_TOKEN.
const metricsToken = "e2e-metrics-token-0123456789abcdef"

func (s *server) scrape(t testing.TB) scraped {
	t.Helper()
	req, err := http.NewRequest("GET", s.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+metricsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return fams
}

// value sums family name's samples carrying every label in match.
func (m scraped) value(name string, match ...string) float64 {
	f, ok := m[name]
	if !ok {
		return -1
	}
	var sum float64
next:
	for _, s := range f.GetMetric() {
		for i := 0; i+1 < len(match); i += 2 {
			if !slices.ContainsFunc(s.GetLabel(), func(l *dto.LabelPair) bool {
				return l.GetName() == match[i] && l.GetValue() == match[i+1]
			}) {
				continue next
			}
		}
		switch {
		case s.Counter != nil:
			sum += s.Counter.GetValue()
		case s.Gauge != nil:
			sum += s.Gauge.GetValue()
		case s.Histogram != nil:
			sum += float64(s.Histogram.GetSampleCount())
		case s.Untyped != nil:
			sum += s.Untyped.GetValue()
		}
	}
	return sum
}

// waitMetric scrapes until ok holds for family name (matching labels), or
// fails after 10 s.
func (s *server) waitMetric(t testing.TB, what, name string, ok func(float64) bool, match ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := s.scrape(t).value(name, match...)
		if ok(v) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s%v stayed at %v", what, name, match, v)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMetrics scrapes /metrics around real traffic: every family issue 16
// names is present and moves, labels carry route patterns (never ids),
// and refusals name their code. The sweepers' runs and lag need the
// expiry sweep stopped, then running: the server restarts between.
func TestMetrics(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_EXPIRY_INTERVAL=1h")
	tm := newTeam(t, s)
	before := s.scrape(t)
	for _, fam := range []string{"oml_http_requests_total", "oml_http_request_duration_seconds", "oml_db_pool_connections",
		"oml_db_pool_max_connections", "oml_db_pool_acquires_total", "oml_journal_appends_total", "oml_journal_sequencer_passes_total", "oml_journal_chained_total", "oml_uploads_in_flight",
		"oml_upload_bytes_in_flight", "oml_upload_bytes_total", "oml_long_polls_waiting", "oml_recalls_waiting", "oml_recall_turns_refused_total", "oml_embedder_calls_total",
		"oml_embedder_duration_seconds", "oml_ready", "oml_sweeper_lag_seconds", "go_goroutines", "process_resident_memory_bytes"} {
		if before.value(fam) < 0 {
			t.Errorf("family %s is absent before any traffic", fam)
		}
	}

	// Tool calls: a write (journal, embedder, review queue), a refusal.
	writer := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	rem := toolJSON[remembered](t, writer, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "copper",
		"text": "Copper from Accra ships in March", "idempotency_key": "m-1"})
	if code, _ := toolError(t, writer, "oml_remember", map[string]any{"workarea": tm.crew.ID, "text": ""}); code != "request.validation" {
		t.Fatalf("empty remember: %s", code)
	}
	// HTTP: a recall, a refusal, a serve and its verdict.
	s.do(t, "POST", "/v1/recall", tm.reader.Token, map[string]any{"scope": tm.crew.ID, "query": "copper"})
	bad := s.do(t, "GET", "/v1/artifacts/nope", tm.reader.Token, nil)
	var env struct {
		Error struct {
			Code      string `json:"code"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(bad.Body, &env); err != nil || env.Error.RequestID == "" || env.Error.RequestID != bad.Header.Get("X-Request-Id") {
		t.Fatalf("an error body names its request (X-Request-Id %q): %s", bad.Header.Get("X-Request-Id"), bad.Body)
	}
	// The access line is written as the handler returns, just after the
	// answer.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(s.logs.String(), "request_id="+env.Error.RequestID); {
		if time.Now().After(deadline) {
			t.Fatalf("request %s is in no log line", env.Error.RequestID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	depth := s.scrape(t).value("oml_review_queue_depth", "tenant", s.TenantID)
	if depth < 1 {
		t.Fatalf("review queue depth for %s after a held write: %v", s.TenantID, depth)
	}

	// An upload part in flight: half its body sent, the gauges show it.
	_, data, digest := randomFile(t, 1<<20)
	ses := decode[uploadSession](t, s.openUpload(t, tm.writer.Token, len(data), digest), 201)
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("PUT", s.URL+"/v1/attachments/uploads/"+ses.UploadSession+"/parts/1", pr)
	req.ContentLength = int64(len(data))
	req.Header.Set("Authorization", "Bearer "+tm.writer.Token)
	partDone := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			partDone <- 0
			return
		}
		resp.Body.Close()
		partDone <- resp.StatusCode
	}()
	if _, err := pw.Write(data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	s.waitMetric(t, "a part half sent", "oml_uploads_in_flight", func(v float64) bool { return v >= 1 })
	s.waitMetric(t, "a part half sent", "oml_upload_bytes_in_flight", func(v float64) bool { return v > 0 })
	_, _ = pw.Write(data[len(data)/2:])
	_ = pw.Close()
	if st := <-partDone; st != 200 {
		t.Fatalf("the part: %d", st)
	}

	// A parked inbox_wait.
	agent := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	waited := make(chan error, 1)
	go func() {
		_, err := agent.CallTool(context.Background(), &mcp.CallToolParams{Name: "inbox_wait",
			Arguments: map[string]any{"workarea": tm.crew.ID, "wait_seconds": 3}})
		waited <- err
	}()
	s.waitMetric(t, "an inbox_wait parked", "oml_long_polls_waiting", func(v float64) bool { return v >= 1 }, "kind", "inbox_wait")
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	s.waitMetric(t, "the wait returned", "oml_long_polls_waiting", func(v float64) bool { return v == 0 }, "kind", "inbox_wait")

	// The held item past its expiry with the sweep stopped: the lag shows.
	s.sql(t, `UPDATE admission.artifacts SET held_expires_at = now() - interval '30 seconds' WHERE id = $1`, rem.ArtifactID)
	s.waitMetric(t, "a held item overdue", "oml_sweeper_lag_seconds", func(v float64) bool { return v >= 30 }, "sweep", "held_expiry")

	after := s.scrape(t)
	moved := func(name string, match ...string) {
		t.Helper()
		if b, a := before.value(name, match...), after.value(name, match...); !(a > b) {
			t.Errorf("%s%v did not move: %v → %v", name, match, b, a)
		}
	}
	moved("oml_http_requests_total", "route", "/v1/recall", "method", "POST", "status", "200")
	moved("oml_http_request_duration_seconds", "route", "/v1/recall")
	moved("oml_http_requests_total", "route", "/v1/artifacts/{id}", "status", "404")
	moved("oml_mcp_tool_calls_total", "tool", "oml_remember", "outcome", "ok")
	moved("oml_mcp_tool_calls_total", "tool", "oml_remember", "outcome", "refused")
	moved("oml_mcp_tool_duration_seconds", "tool", "oml_remember")
	moved("oml_refusals_total", "code", "request.validation", "surface", "mcp")
	moved("oml_refusals_total", "code", "access.not_found", "surface", "http")
	moved("oml_db_pool_acquires_total")
	moved("oml_db_pool_acquire_seconds_total")
	moved("oml_journal_appends_total")
	moved("oml_upload_bytes_total")
	moved("oml_embedder_calls_total", "outcome", "ok")
	moved("oml_embedder_duration_seconds")
	moved("oml_review_queue_depth")
	if after.value("oml_ready") != 1 {
		t.Errorf("oml_ready = %v after /readyz answered ready", after.value("oml_ready"))
	}
	for name, f := range after {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && (strings.Contains(l.GetValue(), "art_") || strings.Contains(l.GetValue(), "nope")) {
					t.Errorf("%s carries a raw path: %s", name, l.GetValue())
				}
			}
		}
	}

	// The sweep running: runs and rows move, the lag goes back to 0.
	s.stop(t)
	s.env = append(s.env, "OML_EXPIRY_INTERVAL=200ms")
	s.launch(t)
	s.waitMetric(t, "the expiry sweep ran", "oml_sweeper_runs_total", func(v float64) bool { return v >= 1 }, "sweep", "held_expiry", "outcome", "ok")
	s.waitMetric(t, "the overdue item swept", "oml_sweeper_items_total", func(v float64) bool { return v >= 1 }, "sweep", "held_expiry")
	s.waitMetric(t, "no item overdue", "oml_sweeper_lag_seconds", func(v float64) bool { return v == 0 }, "sweep", "held_expiry")
}

// TestMetricsToken: on the main listener /metrics answers only the
// operator's token (it names tenants), and nothing at all without one.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, auth := range []string{"", "Bearer ", "Bearer " + metricsToken + "x", "Bearer " + metricsToken[:len(metricsToken)-1],
		"Basic " + metricsToken, "Bearer " + s.AdminKey} {
		r := s.do(t, "GET", "/metrics", "", nil, "Authorization", auth)
		if r.Status != 401 || r.code() != "auth.invalid_key" || strings.Contains(string(r.Body), "oml_ready") {
			t.Fatalf("/metrics with %q: %d %s", auth, r.Status, r.Body)
		}
	}
	if got := s.scrape(t); got.value("oml_ready") < 0 {
		t.Fatal("/metrics with the token has no oml_ready")
	}
	bare := startServer(t, "OML_METRICS_TOKEN=")
	if r := bare.do(t, "GET", "/metrics", metricsToken, nil); r.Status != 404 || r.code() != "request.not_found" {
		t.Fatalf("/metrics without a configured token: %d %s", r.Status, r.Body)
	}
}

// TestMetricsListen: with OML_METRICS_LISTEN the families are served on
// that address only.
func TestMetricsListen(t *testing.T) {
	t.Parallel()
	addr := freePort(t)
	s := startServer(t, "OML_METRICS_LISTEN="+addr)
	if r := s.do(t, "GET", "/metrics", "", nil); r.Status != 404 || r.code() != "request.not_found" {
		t.Fatalf("/metrics on the main listener: %d %s", r.Status, r.Body)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "oml_http_requests_total") {
		t.Fatalf("/metrics on %s: %d %.200s", addr, resp.StatusCode, body)
	}
}

// TestDrain: on SIGTERM a replica answers /readyz 503 at once and keeps
// serving for OML_DRAIN_DELAY, a parked inbox_wait returns at once (its
// client asks again elsewhere), a write in flight completes, and the
// process exits cleanly.
func TestDrain(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_DRAIN_DELAY=2s")
	tm := newTeam(t, s)
	agent := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	waited := make(chan time.Time, 1)
	go func() {
		_, _ = agent.CallTool(context.Background(), &mcp.CallToolParams{Name: "inbox_wait",
			Arguments: map[string]any{"workarea": tm.crew.ID, "wait_seconds": 30}})
		waited <- time.Now()
	}()
	s.waitMetric(t, "an inbox_wait parked", "oml_long_polls_waiting", func(v float64) bool { return v >= 1 }, "kind", "inbox_wait")

	termAt := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-waited:
		if d := at.Sub(termAt); d > time.Second {
			t.Fatalf("the parked wait returned %v after SIGTERM", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the parked wait did not return on SIGTERM")
	}
	if r := s.do(t, "GET", "/readyz", "", nil); r.Status != 503 || r.code() != "service.unavailable" {
		t.Fatalf("/readyz while draining: %d %s", r.Status, r.Body)
	}
	// Still serving during the delay: a write completes.
	writer := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	toolJSON[remembered](t, writer, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "drained",
		"text": "written while the replica drains", "idempotency_key": "drain-1"})
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
		if d := time.Since(termAt); d < 2*time.Second {
			t.Fatalf("stopped after %v, before the drain delay", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit within 15 s of SIGTERM")
	}
	s.cmd = nil
	if n := s.count(t, `SELECT count(*) FROM admission.artifacts WHERE claim_key = 'drained'`); n != 1 {
		t.Fatalf("the write made while draining: %d rows", n)
	}
}
