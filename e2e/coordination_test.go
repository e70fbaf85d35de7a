package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 12's scenario on two replicas sharing one database: agent A
// briefs, starts a session, asks with a deadline and waits on replica 1;
// the human answers on replica 2 and A wakes at once, the answer riding
// once in its notification trailer; A ends with a
// handoff note that agent B receives when it adopts the session; B's feed
// resumes from its stored cursor after both replicas restart; an approval
// with a 60-second deadline resolves itself as the hub exactly once with
// both replicas sweeping, and a human decision after it is a conflict.
func TestCoordinationAcrossReplicas(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_EXPIRY_INTERVAL=1s")
	tm := newTeam(t, s)
	r2 := s.replica(t)
	agentA := s.mcpSession(t, tm.writer.Token, "2025-11-25")

	if b := toolJSON[briefOut](t, agentA, "session_brief", map[string]any{"workarea": tm.crew.ID}); b.Since.Basis != "none" {
		t.Fatalf("A's first brief: %+v", b)
	}
	run := toolJSON[struct {
		SessionID string `json:"session_id"`
	}](t, agentA, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "procure-q1"})
	q := toolJSON[struct {
		QuestionID string `json:"question_id"`
	}](t, agentA, "question_post", map[string]any{"workarea": tm.crew.ID, "body": "Which supplier?",
		"options": []string{"Accra", "Tema"}, "expires_in_seconds": 300, "session": run.SessionID})
	seen := toolJSON[inboxPage](t, agentA, "inbox_read", map[string]any{"workarea": tm.crew.ID})

	woke := make(chan string, 1)
	go func() {
		res, err := agentA.CallTool(t.Context(), &mcp.CallToolParams{Name: "inbox_wait",
			Arguments: map[string]any{"workarea": tm.crew.ID, "since": seen.NextSince, "wait_seconds": 30}})
		body, _ := json.Marshal(res)
		woke <- fmt.Sprint(err, string(body))
	}()
	time.Sleep(500 * time.Millisecond)
	answeredAt := time.Now()
	if r := r2.do(t, "POST", "/v1/inbox/"+q.QuestionID+"/answer", s.AdminKey, map[string]any{"body": "Accra"}); r.Status != 200 {
		t.Fatalf("the human's answer on replica 2: %d %s", r.Status, r.Body)
	}
	select {
	case got := <-woke:
		if lag := time.Since(answeredAt); lag > time.Second || !strings.Contains(got, "Accra") {
			t.Fatalf("A woke after %v with %s", lag, got)
		}
		// The answer rides once in the trailer of A's next successful
		// result (the wait's own), and the call after carries nothing.
		if !strings.Contains(got, `"source":"attention"`) {
			t.Fatalf("the woken wait carries no attention item: %s", got)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("A did not wake")
	}
	if n := trailer(t, agentA, "whoami", map[string]any{}); n != nil {
		t.Fatalf("the answer was delivered twice: %+v", n)
	}

	note := "Accra chosen; next: draft the order in /fs/order.md"
	toolJSON[map[string]any](t, agentA, "session_end", map[string]any{"session_id": run.SessionID, "handoff_note": note})
	agentB := r2.mcpSession(t, tm.author2.Token, "2026-07-28")
	adopted := toolJSON[struct {
		SessionID   string  `json:"session_id"`
		Mode        string  `json:"mode"`
		HandoffNote *string `json:"handoff_note"`
	}](t, agentB, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "procure-q1-b", "from": run.SessionID})
	if adopted.Mode != "adopted" || adopted.SessionID != run.SessionID || adopted.HandoffNote == nil || *adopted.HandoffNote != note {
		t.Fatalf("B's adoption: %+v", adopted)
	}

	type feed struct {
		Events []struct {
			Kind    string         `json:"kind"`
			Payload map[string]any `json:"payload"`
		} `json:"events"`
		NextSince *int64 `json:"next_since"`
	}
	if first := toolJSON[feed](t, agentB, "feed_read", map[string]any{"workarea": tm.crew.ID, "limit": 500}); len(first.Events) == 0 {
		t.Fatalf("B's first feed read: %+v", first)
	}
	toolJSON[map[string]any](t, agentA, "signal_append", map[string]any{"workarea": tm.crew.ID, "kind": "finished", "body": "order drafted"})
	s.restart(t)
	r2.restart(t)
	agentB = s.mcpSession(t, tm.author2.Token, "2026-07-28")
	resumed := toolJSON[feed](t, agentB, "feed_read", map[string]any{"workarea": tm.crew.ID})
	if len(resumed.Events) != 1 || resumed.Events[0].Payload["body"] != "order drafted" {
		t.Fatalf("B's feed after both replicas restarted does not resume from its cursor: %+v", resumed)
	}

	agentA = r2.mcpSession(t, tm.writer.Token, "2025-11-25")
	approval := toolJSON[struct {
		EventID string `json:"event_id"`
	}](t, agentA, "signal_append", map[string]any{"workarea": tm.crew.ID, "kind": "approval", "body": "Order 40 t?",
		"expires_in_seconds": 60, "on_expiry": "approve"})
	deadline := time.Now().Add(90 * time.Second)
	for {
		var resolved int64
		s.scan(t, fmt.Sprintf(`SELECT count(*) FROM inbox.items WHERE id = '%s' AND status = 'approved' AND expired`, approval.EventID), &resolved)
		if resolved == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the approval did not resolve itself at its deadline")
		}
		time.Sleep(time.Second)
	}
	time.Sleep(3 * time.Second) // both replicas sweep again
	var answers int64
	s.scan(t, fmt.Sprintf(`SELECT count(*) FROM platform.journal_events WHERE event_type = 'feed.answer' AND actor = 'hub' AND subject->>'question_id' = '%s'`, approval.EventID), &answers)
	if answers != 1 {
		t.Fatalf("the hub resolved the approval %d times", answers)
	}
	if r := r2.do(t, "POST", "/v1/inbox/"+approval.EventID+"/decide", s.AdminKey, map[string]any{"decision": "declined"}); r.Status != 409 || r.code() != "inbox.conflict" {
		t.Fatalf("a human decision after the deadline: %d %s", r.Status, r.Body)
	}
}
