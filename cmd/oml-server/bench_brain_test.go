package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// BenchmarkBrain measures session brains over MCP: brain_put (each an
// unconditional overwrite of one of 64 values, its session row locked and
// the write journalled) and brain_get, at 1 KiB and 256 KiB values, at
// concurrency 1 and 8, all in one writer's session:
//
//	go test -run '^$' -bench Brain -benchtime 2000x -count 3 ./cmd/oml-server
func BenchmarkBrain(b *testing.B) {
	e := setupBench(b)
	session := e.startSession(b, "bench-brain")
	for _, size := range []int{1 << 10, 256 << 10} {
		for _, c := range []int{1, 8} {
			for _, target := range []string{"brain_put", "brain_get"} {
				b.Run(fmt.Sprintf("target=%s/size=%d/c=%d", target, size, c), func(b *testing.B) {
					e.load(b, loadSpec{Target: target, Concurrency: c, Warmup: brainSlots, Session: session, Size: size})
				})
			}
		}
	}
}

// startSession starts (or resumes) the writer's session named name over
// MCP and returns its id.
func (e *benchEnv) startSession(b *testing.B, name string) string {
	return e.startSessionIn(b, e.workarea, name)
}

// startSessionIn is startSession in another workarea.
func (e *benchEnv) startSessionIn(b *testing.B, workarea, name string) string {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"session_start","arguments":{"workarea":%q,"name":%q}}}`, workarea, name)
	req, _ := http.NewRequest("POST", e.srv.URL+"/mcp", bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Result struct {
			StructuredContent struct {
				SessionID string `json:"session_id"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Result.StructuredContent.SessionID == "" {
		b.Fatalf("session_start: %d %s", resp.StatusCode, raw)
	}
	return out.Result.StructuredContent.SessionID
}
