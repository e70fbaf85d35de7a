package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain turns the test binary into the benchmark's load generator when
// OML_BENCH_LOADGEN is set ("c,n,target,url,key,workarea").
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

type loadResult struct {
	RPS   float64 `json:"rps"`
	P50ms float64 `json:"p50_ms"`
	P99ms float64 `json:"p99_ms"`
}

// loadgen sends n requests of one target over c connections, after a
// warm-up, and prints throughput and latency percentiles as JSON.
func loadgen(spec string, w io.Writer) error {
	f := strings.SplitN(spec, ",", 6)
	if len(f) != 6 {
		return fmt.Errorf("bad spec %q", spec)
	}
	c, _ := strconv.Atoi(f[0])
	n, _ := strconv.Atoi(f[1])
	target, url, key, workarea := f[2], f[3], f[4], f[5]
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c, MaxConnsPerHost: c}}
	once := func() (time.Duration, error) {
		req := newRequest(target, url, key, workarea)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != 200 || bytes.Contains(body, []byte(`"isError":true`)) {
			return 0, fmt.Errorf("%s: %d %s", target, resp.StatusCode, body)
		}
		return time.Since(start), nil
	}
	for range 100 { // warm connections, caches and the pool
		if _, err := once(); err != nil {
			return err
		}
	}
	lat := make([]time.Duration, n)
	var mu sync.Mutex
	next := 0
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				d, err := once()
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
		RPS: float64(n) / elapsed.Seconds(), P50ms: ms(lat[n/2]), P99ms: ms(lat[n*99/100]),
	})
}

// newRequest builds one request as a real client sends it.
func newRequest(target, url, key, workarea string) *http.Request {
	var req *http.Request
	switch target {
	case "select1":
		req, _ = http.NewRequest("GET", url+"/bench/select1", nil)
	case "http":
		req, _ = http.NewRequest("GET", url+"/v1/workareas/"+workarea, nil)
	case "mcp":
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"oml_workarea_info","arguments":{"workarea":%q}}}`, workarea)
		req, _ = http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	if target != "select1" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return req
}
