package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/cpustat"
)

// TestMain turns the test binary into the benchmarks' load generator when
// OML_BENCH_LOADGEN holds a loadSpec.
func TestMain(m *testing.M) {
	if spec := os.Getenv("OML_BENCH_LOADGEN"); spec != "" {
		if err := loadgen(spec, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// loadSpec says what the load generator sends.
type loadSpec struct {
	// select1 | http | mcp | remember | review | review_web | recall_http |
	// recall_mcp | remember_http (= remember) | remember_mcp | brain_put |
	// brain_get | search_http
	Target      string `json:"target"`
	Concurrency int    `json:"c"`
	N           int    `json:"n"`
	Warmup      int    `json:"warmup"`
	URL         string `json:"url"`
	Key         string `json:"key"`
	ReviewerKey string `json:"reviewer_key"`
	Workarea    string `json:"workarea"`
	// The brain targets: the writer's running session and the value size.
	Session string `json:"session,omitempty"`
	Size    int    `json:"size,omitempty"`
	// The search target: its key and scope ("" for everything).
	SearchKey string `json:"search_key,omitempty"`
	Scope     string `json:"scope,omitempty"`
	Query     string `json:"query,omitempty"` // default searchQuery
}

// brainSlots is how many paths the brain targets cycle through.
const brainSlots = 64

type loadResult struct {
	RPS   float64 `json:"rps"`
	P50ms float64 `json:"p50_ms"`
	P99ms float64 `json:"p99_ms"`
	// The timed part's CPU (platform/cpustat), in ms per operation: the
	// machine's less the load generator's own, that is the server's and
	// Postgres's; and what the hypervisor's steal took from the machine.
	CPUms   float64 `json:"cpu_ms"`
	StealMs float64 `json:"steal_ms"`
}

// loadgen runs n operations of one target over c connections, after a
// warm-up, and prints throughput and latency percentiles as JSON.
func loadgen(raw string, w io.Writer) error {
	var spec loadSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return fmt.Errorf("bad spec: %w", err)
	}
	g := &generator{spec: spec, client: &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: spec.Concurrency, MaxConnsPerHost: spec.Concurrency,
	}}, run: fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())}
	for range spec.Warmup {
		if _, err := g.once(); err != nil {
			return err
		}
	}
	lat := make([]time.Duration, spec.N)
	var next atomic.Int64
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	cpu0, err := cpustat.Read()
	if err != nil {
		return err
	}
	start := time.Now()
	for range spec.Concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= spec.N {
					return
				}
				d, err := g.once()
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				lat[i] = d
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu, err := cpustat.Read()
	if err != nil {
		return err
	}
	cpu = cpu.Sub(cpu0)
	if firstErr != nil {
		return firstErr
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	perOp := func(d time.Duration) float64 { return ms(d) / float64(spec.N) }
	return json.NewEncoder(w).Encode(loadResult{
		RPS: float64(spec.N) / elapsed.Seconds(), P50ms: ms(lat[spec.N/2]), P99ms: ms(lat[spec.N*99/100]),
		CPUms: perOp(max(cpu.Busy-cpu.Self, 0)), StealMs: perOp(cpu.Steal),
	})
}

// recallQuery is what the recall targets ask.
const recallQuery = "current aluminium quote Accra Metals validity"

type generator struct {
	spec   loadSpec
	client *http.Client
	run    string
	seq    atomic.Int64
	// The review_web target's session, made once.
	webOnce sync.Once
	webErr  error
	cookie  string
	csrf    string
	// The brain targets' value, made once.
	valueOnce  sync.Once
	brainValue string
}

var (
	servedForm = regexp.MustCompile(`action="/review/(srv_[0-9A-Z]+)/verdict"`)
	csrfInput  = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// signIn signs the reviewer in through the sign-in form, as a browser
// does, and keeps the session cookie and its CSRF token. Like any client
// that is not a browser it sends no Origin (the test server's URL is not
// the configured public one).
func (g *generator) signIn() {
	g.webErr = func() error {
		resp, err := g.client.Get(g.spec.URL + "/sign-in")
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := csrfInput.FindSubmatch(body)
		if m == nil || len(resp.Cookies()) == 0 {
			return fmt.Errorf("sign-in page: %d %.200s", resp.StatusCode, body)
		}
		req, _ := http.NewRequest("POST", g.spec.URL+"/sign-in", strings.NewReader(url.Values{"csrf": {string(m[1])}, "key": {g.spec.ReviewerKey}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(resp.Cookies()[0])
		noFollow := &http.Client{Transport: g.client.Transport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err = noFollow.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		for _, c := range resp.Cookies() {
			if c.Name == "oml_session" {
				g.cookie = c.Value
			}
		}
		if g.cookie == "" {
			return fmt.Errorf("sign-in: %d without a session", resp.StatusCode)
		}
		req, _ = http.NewRequest("GET", g.spec.URL+"/queue", nil)
		req.AddCookie(&http.Cookie{Name: "oml_session", Value: g.cookie})
		resp, err = g.client.Do(req)
		if err != nil {
			return err
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if m = csrfInput.FindSubmatch(body); m == nil {
			return fmt.Errorf("queue page without a CSRF token: %.200s", body)
		}
		g.csrf = string(m[1])
		return nil
	}()
}

// form posts a page form with the session and wants 200.
func (g *generator) form(path string, v url.Values) ([]byte, error) {
	req, err := http.NewRequest("POST", g.spec.URL+path, strings.NewReader(v.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "oml_session", Value: g.cookie})
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("POST %s: %d %.300s", path, resp.StatusCode, b)
	}
	return b, nil
}

// once performs one operation as a real client would and times it.
func (g *generator) once() (time.Duration, error) {
	s := g.spec
	start := time.Now()
	switch s.Target {
	case "select1":
		_, err := g.send("GET", "/bench/select1", "", "", 200)
		return time.Since(start), err
	case "http":
		_, err := g.send("GET", "/v1/workareas/"+s.Workarea, s.Key, "", 200)
		return time.Since(start), err
	case "mcp":
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"oml_workarea_info","arguments":{"workarea":%q}}}`, s.Workarea)
		_, err := g.send("POST", "/mcp", s.Key, body, 200)
		return time.Since(start), err
	case "remember", "remember_http":
		n := g.seq.Add(1)
		body := fmt.Sprintf(`{"verb":"remember","workarea":%q,"claim_key":"bench-%s-%d","text":"Supplier quote %d: 412 USD/t for Q1-2027 delivery, valid until 2026-11-15."}`,
			s.Workarea, g.run, n, n)
		_, err := g.send("POST", "/v1/memories", s.Key, body, 201)
		return time.Since(start), err
	case "remember_mcp":
		n := g.seq.Add(1)
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"oml_remember","arguments":{"workarea":%q,"claim_key":"bench-%s-%d","text":"Supplier quote %d: 412 USD/t for Q1-2027 delivery, valid until 2026-11-15."}}}`,
			s.Workarea, g.run, n, n)
		_, err := g.send("POST", "/mcp", s.Key, body, 200)
		return time.Since(start), err
	case "recall_http":
		body := fmt.Sprintf(`{"query":%q,"scope":%q,"k":8}`, recallQuery, s.Workarea)
		_, err := g.send("POST", "/v1/recall", s.Key, body, 200)
		return time.Since(start), err
	case "recall_mcp":
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"oml_recall","arguments":{"query":%q,"scope":%q,"k":8}}}`,
			recallQuery, s.Workarea)
		_, err := g.send("POST", "/mcp", s.Key, body, 200)
		return time.Since(start), err
	case "brain_put", "brain_get":
		// brain_put overwrites one of brainSlots values of Size bytes in
		// the writer's session brain; brain_get reads one back.
		args := map[string]any{"session": s.Session, "path": fmt.Sprintf("/kv/bench-%d", g.seq.Add(1)%brainSlots)}
		if s.Target == "brain_put" {
			args["store"], args["content"] = "session", g.value()
		}
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": s.Target, "arguments": args}})
		if err != nil {
			return 0, err
		}
		start = time.Now()
		_, err = g.send("POST", "/mcp", s.Key, string(body), 200)
		return time.Since(start), err
	case "search_http":
		q := url.Values{"query": {cmp.Or(s.Query, searchQuery)}, "limit": {"20"}}
		if s.Scope != "" {
			q.Set("workarea", s.Scope)
		}
		_, err := g.send("GET", "/v1/search?"+q.Encode(), s.SearchKey, "", 200)
		return time.Since(start), err
	case "review":
		b, err := g.send("POST", "/v1/reviews/serve", s.ReviewerKey, "", 200)
		if err != nil {
			return 0, err
		}
		var srv struct {
			ServeID string `json:"serve_id"`
		}
		if err := json.Unmarshal(b, &srv); err != nil {
			return 0, err
		}
		_, err = g.send("POST", "/v1/reviews/"+srv.ServeID+"/verdict", s.ReviewerKey, `{"verdict":"approve"}`, 200)
		return time.Since(start), err
	case "review_web":
		// The same round trip through the reviewer's pages: a form post
		// serves the next item's page, a second records the verdict.
		if g.webOnce.Do(g.signIn); g.webErr != nil {
			return 0, g.webErr
		}
		start = time.Now()
		page, err := g.form("/review/serve", url.Values{"csrf": {g.csrf}})
		if err != nil {
			return 0, err
		}
		m := servedForm.FindSubmatch(page)
		if m == nil {
			return 0, fmt.Errorf("the serve page names no serve: %.300s", page)
		}
		_, err = g.form("/review/"+string(m[1])+"/verdict", url.Values{"csrf": {g.csrf}, "verdict": {"approve"}})
		return time.Since(start), err
	}
	return 0, fmt.Errorf("unknown target %q", s.Target)
}

// value is the brain targets' value: Size bytes of text, made once.
func (g *generator) value() string {
	g.valueOnce.Do(func() {
		b := make([]byte, g.spec.Size)
		for i := range b {
			b[i] = 'a' + byte(i%26)
		}
		g.brainValue = string(b)
	})
	return g.brainValue
}

func (g *generator) send(method, path, key, body string, want int) ([]byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, g.spec.URL+path, rd)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if path == "/mcp" {
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want || bytes.Contains(b, []byte(`"isError":true`)) {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return b, nil
}
