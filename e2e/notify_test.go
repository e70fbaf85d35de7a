package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type pendingOut struct {
	Pending []struct {
		Source   string `json:"source"`
		Kind     string `json:"kind"`
		ID       string `json:"id"`
		Workarea string `json:"workarea"`
		Title    string `json:"title"`
		At       string `json:"at"`
	} `json:"pending"`
}

// trailer calls a tool and returns the notifications member of its
// structured content (nil when absent), checking _meta mirrors it.
func trailer(t *testing.T, cs *mcp.ClientSession, name string, args any) *pendingOut {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", name, err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var sc struct {
		Notifications *pendingOut `json:"notifications"`
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.Meta["notifications"])
	var mirrored *pendingOut
	_ = json.Unmarshal(raw, &mirrored)
	meta, _ := json.Marshal(mirrored)
	if want, _ := json.Marshal(sc.Notifications); string(meta) != string(want) {
		t.Fatalf("%s: _meta %s does not mirror %s", name, meta, want)
	}
	return sc.Notifications
}

// An answer to an agent's question rides once on its next tool call, any
// tool; a subscription delivers another agent's signal once; notify_wait
// returns as soon as something is pending; refusals are typed.
func TestNotifyTrailerAndSubscriptions(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	ws := tm.crew.ID
	agent := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	other := s.mcpSession(t, tm.author2.Token, "2025-11-25")

	if n := trailer(t, agent, "whoami", map[string]any{}); n != nil {
		t.Fatalf("nothing pending, yet: %+v", n)
	}
	q := toolJSON[struct {
		QuestionID string `json:"question_id"`
	}](t, agent, "question_post", map[string]any{"workarea": ws, "body": "Which alloy?"})
	decode[inboxItem](t, s.do(t, "POST", "/v1/inbox/"+q.QuestionID+"/answer", s.AdminKey, map[string]any{"body": "steel"}), 200)
	n := trailer(t, agent, "whoami", map[string]any{})
	if n == nil || len(n.Pending) != 1 || n.Pending[0].Source != "attention" || n.Pending[0].Kind != "answer" ||
		n.Pending[0].Workarea != ws || n.Pending[0].ID == "" || n.Pending[0].At == "" {
		t.Fatalf("the answer's nudge: %+v", n)
	}
	if n := trailer(t, agent, "whoami", map[string]any{}); n != nil {
		t.Fatalf("delivered twice: %+v", n)
	}
	if n := trailer(t, other, "whoami", map[string]any{}); n != nil {
		t.Fatalf("another agent got the asker's nudge: %+v", n)
	}

	// Refusals.
	for name, args := range map[string]map[string]any{
		"empty kinds":  {"kinds": []string{}},
		"unknown kind": {"kinds": []string{"gossip"}},
	} {
		if code, body := toolError(t, agent, "notify_subscribe", args); code != "request.validation" {
			t.Fatalf("%s: %s %s", name, code, body)
		}
	}
	toolJSON[struct{}](t, agent, "signal_append", map[string]any{"workarea": ws, "kind": "signal", "body": "before"})
	sub := toolJSON[struct {
		SubscriptionID string `json:"subscription_id"`
		Cursor         int64  `json:"cursor"`
	}](t, agent, "notify_subscribe", map[string]any{"kinds": []string{"signal"}, "workarea": ws, "drop_own": true})
	if sub.SubscriptionID == "" || sub.Cursor == 0 {
		t.Fatalf("notify_subscribe: %+v", sub)
	}
	if code, _ := toolError(t, other, "notify_unsubscribe", map[string]any{"subscription_id": sub.SubscriptionID}); code != "access.not_found" {
		t.Fatalf("another's unsubscribe: %s", code)
	}
	list := toolJSON[struct {
		Subscriptions []struct {
			SubscriptionID string   `json:"subscription_id"`
			Kinds          []string `json:"kinds"`
		} `json:"subscriptions"`
	}](t, agent, "notify_list", map[string]any{})
	if len(list.Subscriptions) != 1 || list.Subscriptions[0].SubscriptionID != sub.SubscriptionID {
		t.Fatalf("notify_list: %+v", list)
	}

	// Another agent's signal arrives once; the agent's own is dropped.
	toolJSON[struct{}](t, agent, "signal_append", map[string]any{"workarea": ws, "kind": "signal", "body": "mine"})
	toolJSON[struct{}](t, other, "signal_append", map[string]any{"workarea": ws, "kind": "signal", "body": "furnace is hot"})
	n = trailer(t, agent, "whoami", map[string]any{})
	if n == nil || len(n.Pending) != 1 || n.Pending[0].Source != "subscription" || n.Pending[0].Kind != "signal" {
		t.Fatalf("the signal's nudge: %+v", n)
	}
	if n := trailer(t, agent, "notify_list", map[string]any{}); n != nil {
		t.Fatalf("the signal delivered twice: %+v", n)
	}

	// notify_wait returns as soon as something is pending.
	if got := toolJSON[pendingOut](t, agent, "notify_wait", map[string]any{"wait_seconds": 0}); len(got.Pending) != 0 {
		t.Fatalf("a poll with nothing pending: %+v", got)
	}
	done := make(chan pendingOut, 1)
	start := time.Now()
	go func() {
		res, err := agent.CallTool(context.Background(), &mcp.CallToolParams{Name: "notify_wait", Arguments: map[string]any{"wait_seconds": 20}})
		var out pendingOut
		if err == nil && !res.IsError {
			b, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(b, &out)
		}
		done <- out
	}()
	time.Sleep(300 * time.Millisecond)
	toolJSON[struct{}](t, other, "signal_append", map[string]any{"workarea": ws, "kind": "signal", "body": "cooling down"})
	select {
	case got := <-done:
		if len(got.Pending) != 1 || got.Pending[0].Kind != "signal" {
			t.Fatalf("notify_wait: %+v", got)
		}
		if waited := time.Since(start); waited > 10*time.Second {
			t.Fatalf("notify_wait sat out %v", waited)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("notify_wait never returned")
	}
	if n := trailer(t, agent, "whoami", map[string]any{}); n != nil {
		t.Fatalf("notify_wait's delivery repeated: %+v", n)
	}
	toolJSON[struct{}](t, agent, "notify_unsubscribe", map[string]any{"subscription_id": sub.SubscriptionID})
	if code, _ := toolError(t, agent, "notify_unsubscribe", map[string]any{"subscription_id": sub.SubscriptionID}); code != "access.not_found" {
		t.Fatalf("a second unsubscribe: %s", code)
	}
}
