package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// With OML_REPLICAS=3 and a tenant limit of 300 writes a minute, a burst
// spread over three replicas admits about 300 and refuses the rest with
// 429, limit.quota and Retry-After; over MCP the same refusal is a
// retryable tool error with the same seconds. A key's request limit is
// split the same way and names limit.rate.
func TestQuotasAcrossReplicas(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_REPLICAS=3", "OML_QUOTA_REFRESH=100ms")
	tm := newTeam(t, s)
	replicas := []*server{s, s.replica(t), s.replica(t)}
	if r := s.do(t, "PUT", "/v1/quotas", s.AdminKey, map[string]any{"writes_per_minute": 300}); r.Status != 200 {
		t.Fatalf("set the tenant's quota: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "GET", "/v1/quotas", s.AdminKey, nil); !strings.Contains(string(r.Body), `"writes_per_minute":300`) {
		t.Fatalf("quotas: %s", r.Body)
	}
	// Each replica reads the setting again within its refresh interval.
	time.Sleep(300 * time.Millisecond)

	var admitted, refused, bad atomic.Int64
	var mu sync.Mutex
	var sample reply
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 12 {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > 600 {
					return
				}
				r := replicas[i%3].do(t, "POST", "/v1/memories", tm.writer.Token,
					map[string]any{"workarea": tm.crew.ID, "claim_key": fmt.Sprintf("burst-%d", i), "text": "burst"})
				switch {
				case r.Status == 201:
					admitted.Add(1)
				case r.Status == 429 && r.code() == "limit.quota":
					refused.Add(1)
					mu.Lock()
					sample = r
					mu.Unlock()
				default:
					bad.Add(1)
					t.Errorf("write %d: %d %s", i, r.Status, r.Body)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("admitted %d, refused %d", admitted.Load(), refused.Load())
	if a := admitted.Load(); a < 270 || a > 330 {
		t.Fatalf("admitted %d of 600 writes at 300 a minute over 3 replicas, want 270–330", a)
	}
	if secs, err := strconv.Atoi(sample.Header.Get("Retry-After")); err != nil || secs < 1 {
		t.Fatalf("a refusal's Retry-After %q", sample.Header.Get("Retry-After"))
	}
	if n := s.count(t, `SELECT count(*) FROM admission.artifacts WHERE claim_key LIKE 'burst-%'`); n != admitted.Load() {
		t.Fatalf("%d burst claims stored, %d admitted", n, admitted.Load())
	}
	// Over MCP: a retryable tool error naming the wait.
	// (The bucket refills at 100 a minute per replica: the first call or
	// two may find a token.)
	mcpWriter := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	var refusal string
	for i := range 20 {
		raw, isErr := callTool(t, mcpWriter, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": fmt.Sprintf("mcp-%d", i), "text": "x"})
		if isErr {
			refusal = string(raw)
			break
		}
	}
	if !strings.Contains(refusal, `"code":"limit.quota"`) || !strings.Contains(refusal, `"retryable":true`) || !strings.Contains(refusal, `"retry_after_seconds":`) {
		t.Fatalf("MCP over the quota: %s", refusal)
	}
	// Reads are not writes: recall still answers.
	if r := s.do(t, "POST", "/v1/recall", tm.reader.Token, map[string]any{"query": "burst", "scope": tm.crew.ID}); r.Status != 200 {
		t.Fatalf("recall over the write quota: %d %s", r.Status, r.Body)
	}

	// A key's requests: 30 a minute on 3 replicas, 10 on each.
	if r := s.do(t, "PUT", "/v1/quotas", s.AdminKey, map[string]any{"key_id": tm.reader.KeyID, "requests_per_minute": 30}); r.Status != 200 {
		t.Fatalf("set the key's limit: %d %s", r.Status, r.Body)
	}
	time.Sleep(300 * time.Millisecond)
	ok := 0
	var last reply
	for range 15 {
		last = replicas[1].do(t, "POST", "/v1/recall", tm.reader.Token, map[string]any{"query": "copper", "scope": tm.crew.ID})
		if last.Status == 200 {
			ok++
		}
	}
	if ok < 9 || ok > 11 || last.Status != 429 || last.code() != "limit.rate" || last.Header.Get("Retry-After") == "" {
		t.Fatalf("%d of 15 recalls answered on one replica at 30 a minute over 3; last %d %s", ok, last.Status, last.Body)
	}
	if out := s.mustOML(t, s.AdminKey, "admin", "quota", "show"); !strings.Contains(out, "tenant writes: 300 a minute") || !strings.Contains(out, tm.reader.KeyID+": 30 requests a minute") {
		t.Fatalf("oml admin quota show: %s", out)
	}
	if out := s.mustOML(t, s.AdminKey, "admin", "quota", "set", "--writes-per-minute", "0"); !strings.Contains(out, "tenant writes: no limit") {
		t.Fatalf("oml admin quota set: %s", out)
	}
	// Over MCP the key's limit is a retryable tool error with its seconds.
	if r := s.do(t, "PUT", "/v1/quotas", s.AdminKey, map[string]any{"key_id": tm.author2.KeyID, "requests_per_minute": 6}); r.Status != 200 {
		t.Fatalf("limit writer-2: %d %s", r.Status, r.Body)
	}
	time.Sleep(300 * time.Millisecond)
	limited := s.mcpSession(t, tm.author2.Token, "2025-11-25")
	var rate string
	for range 6 {
		raw, isErr := callTool(t, limited, "oml_recall", map[string]any{"query": "copper", "scope": tm.crew.ID})
		if isErr {
			rate = string(raw)
			break
		}
	}
	if !strings.Contains(rate, `"code":"limit.rate"`) || !strings.Contains(rate, `"retryable":true`) || !strings.Contains(rate, `"retry_after_seconds":`) {
		t.Fatalf("MCP over a key's limit: %s", rate)
	}
	// A JSON-RPC batch is refused: one request per POST, one request
	// against the key's limit.
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`
	if r := s.do(t, "POST", "/mcp", tm.writer.Token, json.RawMessage(batch), "Accept", "application/json, text/event-stream"); r.Status != 400 || r.code() != "request.validation" {
		t.Fatalf("a batch: %d %s", r.Status, r.Body)
	}
	// Bad settings are refused, as are other keys' attempts to set them.
	for name, c := range map[string]struct {
		key  string
		body map[string]any
		code string
	}{
		"both":      {s.AdminKey, map[string]any{"writes_per_minute": 1, "key_id": tm.reader.KeyID, "requests_per_minute": 1}, "request.validation"},
		"negative":  {s.AdminKey, map[string]any{"writes_per_minute": -1}, "request.validation"},
		"a writer":  {tm.writer.Token, map[string]any{"writes_per_minute": 1}, "access.verb_ceiling"},
		"a foreign": {s.AdminKey, map[string]any{"key_id": "key_nope", "requests_per_minute": 1}, "access.not_found"},
	} {
		if r := s.do(t, "PUT", "/v1/quotas", c.key, c.body); r.code() != c.code {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
}
