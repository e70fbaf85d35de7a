package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
	// select1 | http | mcp | remember | review | recall_http | recall_mcp |
	// remember_http (= remember) | remember_mcp
	Target      string `json:"target"`
	Concurrency int    `json:"c"`
	N           int    `json:"n"`
	Warmup      int    `json:"warmup"`
	URL         string `json:"url"`
	Key         string `json:"key"`
	ReviewerKey string `json:"reviewer_key"`
	Workarea    string `json:"workarea"`
}

type loadResult struct {
	RPS   float64 `json:"rps"`
	P50ms float64 `json:"p50_ms"`
	P99ms float64 `json:"p99_ms"`
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
	if firstErr != nil {
		return firstErr
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return json.NewEncoder(w).Encode(loadResult{
		RPS: float64(spec.N) / elapsed.Seconds(), P50ms: ms(lat[spec.N/2]), P99ms: ms(lat[spec.N*99/100]),
	})
}

// recallQuery is what the recall targets ask.
const recallQuery = "current aluminium quote Accra Metals validity"

type generator struct {
	spec   loadSpec
	client *http.Client
	run    string
	seq    atomic.Int64
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
	}
	return 0, fmt.Errorf("unknown target %q", s.Target)
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
