package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replica starts a second oml-server on s's database, keys and blob store,
// at its own address; it is stopped (gracefully) when t ends.
func (s *server) replica(t testing.TB) *server {
	t.Helper()
	r := &server{
		DBURL: s.DBURL, TenantID: s.TenantID, RootID: s.RootID, AdminKey: s.AdminKey, Bucket: s.Bucket,
		cache: t.TempDir(), logs: &syncBuffer{},
	}
	addr := freePort(t)
	r.URL = "http://" + addr
	for _, kv := range s.env {
		if strings.HasPrefix(kv, "OML_LISTEN=") {
			kv = "OML_LISTEN=" + addr
		}
		r.env = append(r.env, kv)
	}
	t.Cleanup(func() {
		r.stop(t)
		if t.Failed() {
			t.Logf("replica errors:\n%s", r.errorLines())
		}
	})
	r.launch(t)
	return r
}

type inboxPage struct {
	Items []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Answer *struct {
			Body string `json:"body"`
		} `json:"answer"`
	} `json:"items"`
	NextSince int64 `json:"next_since"`
}

// An agent waiting in inbox_wait on one replica wakes as soon as the human
// answers on another (LISTEN/NOTIFY), well inside a second; with nothing
// to wake it, a wait returns empty when its time is up.
func TestInboxWaitAcrossReplicas(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	r2 := s.replica(t)
	agent := s.mcpSession(t, tm.writer.Token, "2025-11-25")

	q := toolJSON[struct {
		QuestionID string `json:"question_id"`
	}](t, agent, "question_post", map[string]any{"workarea": tm.crew.ID, "body": "Which supplier for Q1?", "expires_in_seconds": 300})
	seen := toolJSON[inboxPage](t, agent, "inbox_read", map[string]any{"workarea": tm.crew.ID})
	if len(seen.Items) != 1 || seen.Items[0].Status != "open" {
		t.Fatalf("inbox_read: %+v", seen)
	}

	// Nothing lands: a short wait returns empty when its time is up.
	start := time.Now()
	idle := toolJSON[inboxPage](t, agent, "inbox_wait", map[string]any{"workarea": tm.crew.ID, "since": seen.NextSince, "wait_seconds": 1})
	if len(idle.Items) != 0 || time.Since(start) < time.Second {
		t.Fatalf("an idle wait: %+v after %v", idle, time.Since(start))
	}

	type waited struct {
		page inboxPage
		raw  string
		at   time.Time
	}
	done := make(chan waited, 1)
	go func() {
		// Not toolJSON: only the test's goroutine may fail it.
		res, err := agent.CallTool(t.Context(), &mcp.CallToolParams{Name: "inbox_wait",
			Arguments: map[string]any{"workarea": tm.crew.ID, "since": seen.NextSince, "wait_seconds": 30}})
		w := waited{at: time.Now()}
		if err == nil && !res.IsError {
			body, _ := json.Marshal(res.StructuredContent)
			w.raw = string(body)
			_ = json.Unmarshal(body, &w.page)
		} else {
			w.raw = fmt.Sprint(err, res)
		}
		done <- w
	}()
	time.Sleep(500 * time.Millisecond) // the wait is parked on replica 1
	answered := time.Now()
	r := r2.do(t, "POST", "/v1/inbox/"+q.QuestionID+"/answer", s.AdminKey, map[string]any{"body": "Accra"})
	if r.Status != 200 {
		t.Fatalf("answer on replica 2: %d %s", r.Status, r.Body)
	}
	select {
	case w := <-done:
		if len(w.page.Items) != 1 || w.page.Items[0].Answer == nil || w.page.Items[0].Answer.Body != "Accra" {
			t.Fatalf("inbox_wait woke with %s", w.raw)
		}
		if lag := w.at.Sub(answered); lag > time.Second {
			t.Fatalf("inbox_wait woke %v after the answer on the other replica", lag)
		}
		t.Logf("woke %v after the answer on the other replica", w.at.Sub(answered))
	case <-time.After(20 * time.Second):
		t.Fatal("inbox_wait did not wake on an answer committed on the other replica")
	}
}
