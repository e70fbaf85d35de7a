package e2e

import (
	"strings"
	"testing"
)

// The operator (D9): with an admin grant it issues and revokes keys,
// creates and changes workareas, grants, bans, lists grants and the tree,
// reassigns sessions and verifies the journal; every content path —
// recall, graph, my_work, writes, artifacts, review, downloads, the events
// tail, the inbox, the read log, demote and erase — refuses it with the
// D9 rule named, and nothing it was refused changed anything.
func TestOperatorMatrix(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	op := s.issueKey(t, "ops-1", "operator")
	s.grant(t, op.KeyID, "universe", "admin", "allow")
	writer := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	item := toolJSON[remembered](t, writer, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "c", "text": "Accra quoted 412 USD/t."})
	run := toolJSON[sessionStarted](t, writer, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "nightly"})

	// Operator verbs.
	ok := func(name string, r reply, status int) {
		t.Helper()
		if r.Status != status {
			t.Errorf("operator %s: %d %s", name, r.Status, r.Body)
		}
	}
	key := decode[issuedKey](t, s.do(t, "POST", "/v1/keys", op.Token, map[string]any{"principal": "agent-9", "role": "writer"}), 201)
	ok("lists keys", s.do(t, "GET", "/v1/keys", op.Token, nil), 200)
	ok("creates a workarea", s.do(t, "POST", "/v1/workareas", op.Token, map[string]any{"parent": "universe.procurement", "name": "tin-crew"}), 201)
	ok("changes a workarea's status", s.do(t, "PATCH", "/v1/workareas/universe.procurement.tin-crew", op.Token, map[string]any{"status": "committed"}), 200)
	g := decode[struct {
		GrantID string `json:"grant_id"`
	}](t, s.do(t, "POST", "/v1/grants", op.Token, map[string]any{"key_id": key.KeyID, "workarea": "universe.procurement.metals-crew", "scope": "writer", "effect": "allow"}), 201)
	s.do(t, "POST", "/v1/grants", op.Token, map[string]any{"key_id": key.KeyID, "workarea": "universe.procurement.metals-crew", "scope": "reader", "effect": "allow"})
	ok("lists grants", s.do(t, "GET", "/v1/grants?key_id="+key.KeyID, op.Token, nil), 200)
	ok("lists the tree", s.do(t, "GET", "/v1/workareas", op.Token, nil), 200)
	if got := decode[struct {
		Workareas []struct {
			Path string `json:"path"`
		} `json:"workareas"`
	}](t, s.do(t, "GET", "/v1/workareas", op.Token, nil), 200); len(got.Workareas) < 4 {
		t.Errorf("the operator's tree: %+v", got)
	}
	ban := decode[struct {
		BanID string `json:"ban_id"`
	}](t, s.do(t, "POST", "/v1/bans", op.Token, map[string]any{"principal": "agent-9", "reason": "test"}), 201)
	ok("lists bans", s.do(t, "GET", "/v1/bans", op.Token, nil), 200)
	ok("lifts a ban", s.do(t, "DELETE", "/v1/bans/"+ban.BanID, op.Token, nil), 200)
	moved := s.do(t, "POST", "/v1/sessions/"+run.SessionID+"/reassign", op.Token, map[string]any{"to_key_id": key.KeyID})
	ok("reassigns a session", moved, 200)
	if strings.Contains(string(moved.Body), "handoff_note\":\"") && !strings.Contains(string(moved.Body), "handoff_note\":\"\"") {
		t.Errorf("a reassignment shows the operator a handoff note: %s", moved.Body)
	}
	ok("verifies the journal", s.do(t, "GET", "/v1/admin/journal/verify", op.Token, nil), 200)
	ok("removes a grant", s.do(t, "DELETE", "/v1/grants/"+g.GrantID, op.Token, nil), 200)
	ok("revokes a key", s.do(t, "DELETE", "/v1/keys/"+key.KeyID, op.Token, nil), 200)

	// Content paths: refused with D9, nothing changed.
	events := s.count(t, `SELECT count(*) FROM platform.journal_events`)
	d9 := func(name string, r reply) {
		t.Helper()
		if r.Status != 403 || r.code() != "access.verb_ceiling" || !strings.Contains(string(r.Body), "(D9)") {
			t.Errorf("operator %s: %d %s, want access.verb_ceiling naming D9", name, r.Status, r.Body)
		}
	}
	d9("recall", s.do(t, "POST", "/v1/recall", op.Token, map[string]any{"query": "copper", "scope": "universe"}))
	d9("graph", s.do(t, "GET", "/v1/graph?scope="+tm.crew.ID+"&roots="+item.ArtifactID, op.Token, nil))
	d9("remember", s.do(t, "POST", "/v1/memories", op.Token, map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "x"}))
	d9("my work", s.do(t, "GET", "/v1/memories/mine", op.Token, nil))
	d9("an artifact", s.do(t, "GET", "/v1/artifacts/"+item.ArtifactID, op.Token, nil))
	d9("the review queue", s.do(t, "GET", "/v1/reviews/queue", op.Token, nil))
	d9("a serve", s.do(t, "POST", "/v1/reviews/serve", op.Token, nil))
	d9("a download", s.do(t, "GET", "/v1/artifacts/"+item.ArtifactID+"/attachments/"+strings.Repeat("ab", 32), op.Token, nil))
	d9("the events tail", s.do(t, "GET", "/v1/events?scope=universe&after_seq=0", op.Token, nil))
	d9("the inbox", s.do(t, "GET", "/v1/inbox", op.Token, nil))
	d9("the read log", s.do(t, "GET", "/v1/read-log?key_id="+tm.reader.KeyID, op.Token, nil))
	d9("a workarea's content view", s.do(t, "GET", "/v1/workareas/"+tm.crew.ID, op.Token, nil))
	d9("demote", s.do(t, "POST", "/v1/artifacts/"+item.ArtifactID+"/demote", op.Token, map[string]any{"reason": "x"}))
	d9("erase", s.do(t, "POST", "/v1/artifacts/"+item.ArtifactID+"/erase", op.Token, map[string]any{"reason": "x"}))
	d9("sessions", s.do(t, "GET", "/v1/sessions?workarea="+tm.crew.ID, op.Token, nil))
	mcp := s.mcpSession(t, op.Token, "2025-11-25")
	for _, tool := range []struct {
		name string
		args map[string]any
	}{
		{"oml_recall", map[string]any{"query": "copper", "scope": "universe"}},
		{"oml_my_work", map[string]any{}},
		{"oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "y", "text": "y"}},
		{"oml_graph", map[string]any{"scope": tm.crew.ID, "roots": []string{item.ArtifactID}}},
		{"oml_events_tail", map[string]any{"scope": "universe"}},
		{"oml_workarea_info", map[string]any{"workarea": "universe"}},
		{"inbox_read", map[string]any{}},
		{"feed_read", map[string]any{"workarea": tm.crew.ID}},
		{"session_start", map[string]any{"workarea": tm.crew.ID, "name": "x"}},
	} {
		code, body := toolError(t, mcp, tool.name, tool.args)
		if code != "access.verb_ceiling" || !strings.Contains(string(body), "(D9)") {
			t.Errorf("operator %s over MCP: %s %s", tool.name, code, body)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events`); n != events {
		t.Errorf("refused content calls appended %d journal events", n-events)
	}
	// Its own refused write left no claim.
	if n := s.count(t, `SELECT count(*) FROM admission.artifacts WHERE claim_key IN ('x', 'y')`); n != 0 {
		t.Errorf("the operator's refused writes stored %d claims", n)
	}
}
