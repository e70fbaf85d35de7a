package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCoordination measures, on two real replicas sharing one
// database, how soon an inbox_wait parked on replica 1 returns after the
// human's answer on replica 2 commits (200 answers, one at a time), and,
// in the same run, feed_read pages/s beside oml_workarea_info calls/s over
// MCP at concurrency 1:
//
//	go test -run '^$' -bench Coordination -benchtime 1x ./e2e
func BenchmarkCoordination(b *testing.B) {
	s := startServer(b)
	tm := newTeam(b, s)
	r2 := s.replica(b)
	agent := s.mcpSession(b, tm.writer.Token, "2025-11-25")
	ctx := context.Background()
	call := func(name string, args map[string]any, into any) {
		res, err := agent.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", name, err, res)
		}
		if into != nil {
			body, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(body, into); err != nil {
				b.Fatal(err)
			}
		}
	}

	const answers = 200
	var wake []float64
	since := int64(0)
	for i := range answers {
		var q struct {
			QuestionID string `json:"question_id"`
		}
		call("question_post", map[string]any{"workarea": tm.crew.ID, "body": fmt.Sprintf("question %d", i)}, &q)
		// The cursor after everything so far: the next item is the answer.
		for {
			var page inboxPage
			call("inbox_read", map[string]any{"workarea": tm.crew.ID, "since": since, "limit": 500}, &page)
			since = page.NextSince
			if len(page.Items) < 500 {
				break
			}
		}
		done := make(chan time.Time, 1)
		go func(since int64) {
			_, _ = agent.CallTool(ctx, &mcp.CallToolParams{Name: "inbox_wait",
				Arguments: map[string]any{"workarea": tm.crew.ID, "since": since, "wait_seconds": 30}})
			done <- time.Now()
		}(since)
		time.Sleep(30 * time.Millisecond) // parked
		if r := r2.do(b, "POST", "/v1/inbox/"+q.QuestionID+"/answer", s.AdminKey, map[string]any{"body": "yes"}); r.Status != 200 {
			b.Fatalf("answer: %d %s", r.Status, r.Body)
		}
		answered := time.Now()
		woke := <-done
		wake = append(wake, float64(woke.Sub(answered).Microseconds())/1000)
	}

	for i := range 500 {
		call("signal_append", map[string]any{"workarea": tm.crew.ID, "kind": "signal", "body": fmt.Sprintf("signal %d", i)}, nil)
	}
	rate := func(name string, args map[string]any) float64 {
		n, start := 0, time.Now()
		for time.Since(start) < 3*time.Second {
			call(name, args, nil)
			n++
		}
		return float64(n) / time.Since(start).Seconds()
	}
	pages := rate("feed_read", map[string]any{"workarea": tm.crew.ID, "since": 0, "limit": 50})
	info := rate("oml_workarea_info", map[string]any{"workarea": tm.crew.ID})

	slices.Sort(wake)
	pct := func(p float64) float64 { return wake[min(len(wake)-1, int(p*float64(len(wake))))] }
	fmt.Printf("\n| inbox_wait woken across replicas | answers | p50 ms | p90 ms | p99 ms | max ms |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	fmt.Printf("| answer on replica 2 → wait on replica 1 returns | %d | %.1f | %.1f | %.1f | %.1f |\n", len(wake), pct(0.5), pct(0.9), pct(0.99), wake[len(wake)-1])
	fmt.Printf("\n| MCP call, concurrency 1 | per second |\n| --- | ---: |\n")
	fmt.Printf("| feed_read (a page of 50) | %.0f |\n| oml_workarea_info | %.0f |\n\n", pages, info)
}
