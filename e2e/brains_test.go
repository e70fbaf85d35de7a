package e2e

import (
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type brainEntry struct {
	SessionID string `json:"session_id"`
	Path      string `json:"path"`
	Type      string `json:"type"`
	Content   string `json:"content"`
	Version   string `json:"version"`
	SizeBytes int64  `json:"size_bytes"`
	Created   bool   `json:"created"`
}

// Session brains (issue 15) over the real binaries: the owner's private
// working state, with conditional writes that let exactly one of two
// racing writers win, the 4 MiB bound refused before anything is stored,
// another agent's brain answering as a missing one, an adoption handing it
// over, a fork copying it, an admin's journalled oversight read, and a
// prune dropping it.
func TestBrains(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	writer := s.mcpSession(t, tm.writer.Token, "2026-07-28")
	run := toolJSON[sessionStarted](t, writer, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "nightly"})
	put := func(args map[string]any) brainEntry {
		t.Helper()
		return toolJSON[brainEntry](t, writer, "brain_put", args)
	}
	v1 := put(map[string]any{"store": "session", "path": "/fs/RECOVERY.md", "content": "step 1", "if_version": "absent"})
	if !v1.Created || v1.SessionID != run.SessionID || !strings.HasPrefix(v1.Version, "sha256:") {
		t.Fatalf("first put: %+v", v1)
	}
	if feed, _ := callTool(t, writer, "feed_read", map[string]any{"workarea": tm.crew.ID, "since": 0}); strings.Contains(string(feed), "brain.") {
		t.Fatalf("a brain write reached the feed: %s", feed)
	}
	got := toolJSON[brainEntry](t, writer, "brain_get", map[string]any{"path": "/fs/RECOVERY.md"})
	if got.Content != "step 1" || got.Version != v1.Version || got.Type != "file" {
		t.Fatalf("get: %+v", got)
	}

	// Two writers holding one version: exactly one wins.
	var wg sync.WaitGroup
	results := make([]string, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := s.mcpSession(t, tm.writer.Token, "2026-07-28")
			sc, isErr := callTool(t, cs, "brain_put", map[string]any{"store": "session", "session": run.SessionID,
				"path": "/fs/RECOVERY.md", "content": "racer " + string(rune('a'+i)), "if_version": v1.Version})
			if isErr {
				results[i] = string(sc)
			}
		}()
	}
	wg.Wait()
	wins := 0
	for _, r := range results {
		switch {
		case r == "":
			wins++
		case !strings.Contains(r, "session.conflict") || !strings.Contains(r, "current_version=sha256:"):
			t.Errorf("a losing racer: %s", r)
		}
	}
	if wins != 1 {
		t.Fatalf("%d racers won", wins)
	}

	// The bound: 4 MiB is stored, 4 MiB + 1 byte is refused and nothing
	// is stored.
	big := strings.Repeat("x", 4<<20)
	if e := put(map[string]any{"store": "session", "path": "/kv/big", "content": big}); e.SizeBytes != 4<<20 {
		t.Fatalf("4 MiB: %+v", e)
	}
	if code, body := toolError(t, writer, "brain_put", map[string]any{"store": "session", "path": "/kv/bigger", "content": big + "y"}); code != "limit.size" {
		t.Fatalf("4 MiB + 1: %s %.200s", code, body)
	}
	if code, _ := toolError(t, writer, "brain_get", map[string]any{"path": "/kv/bigger"}); code != "access.not_found" {
		t.Fatalf("the refused value: %s", code)
	}
	for name, args := range map[string]map[string]any{
		"no store":           {"path": "/fs/a", "content": "x"},
		"outside namespaces": {"store": "session", "path": "/etc/passwd", "content": "x"},
		"a bad if_version":   {"store": "session", "path": "/fs/a", "content": "x", "if_version": "v1"},
	} {
		if code, body := toolError(t, writer, "brain_put", args); code != "request.validation" {
			t.Errorf("%s: %s %s", name, code, body)
		}
	}

	// Another agent: the session answers as a missing one, to reads and
	// writes alike; so does the admin over MCP.
	other := s.mcpSession(t, tm.author2.Token, "2026-07-28")
	for who, key := range map[string]string{"author2": tm.author2.Token, "reader": tm.reader.Token, "admin": s.AdminKey} {
		cs := s.mcpSession(t, key, "2026-07-28")
		if code, _ := toolError(t, cs, "brain_get", map[string]any{"session": run.SessionID, "path": "/fs/RECOVERY.md"}); code != "access.not_found" {
			t.Errorf("%s reads the brain: %s", who, code)
		}
		if code, _ := toolError(t, cs, "brain_list", map[string]any{"session": run.SessionID}); code != "access.not_found" {
			t.Errorf("%s lists the brain: %s", who, code)
		}
	}
	if code, _ := toolError(t, other, "brain_put", map[string]any{"store": "session", "session": run.SessionID, "path": "/fs/x", "content": "x"}); code != "access.not_found" {
		t.Fatalf("another agent writes the brain: %s", code)
	}

	// Deleting is the owner's, over HTTP: the MCP surface has no delete
	// verb (R1).
	if _, err := writer.CallTool(t.Context(), &mcp.CallToolParams{Name: "brain_delete", Arguments: map[string]any{"store": "session", "path": "/kv/big"}}); err == nil || !strings.Contains(err.Error(), "(R1)") {
		t.Fatalf("brain_delete over MCP: %v", err)
	}
	del := "/v1/sessions/" + run.SessionID + "/brain?path=/kv/big"
	if r := s.do(t, "DELETE", del, tm.author2.Token, nil); r.Status != 404 {
		t.Fatalf("another agent deletes: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "DELETE", del+"&if_version=absent", tm.writer.Token, nil); r.code() != "session.conflict" {
		t.Fatalf("a conditional delete of a stored entry under absent: %d %s", r.Status, r.Body)
	}
	decode[map[string]any](t, s.do(t, "DELETE", del, tm.writer.Token, nil), 200)
	if r := s.do(t, "DELETE", del, tm.writer.Token, nil); r.Status != 404 {
		t.Fatalf("a second delete: %d %s", r.Status, r.Body)
	}
	toolJSON[brainEntry](t, writer, "brain_put", map[string]any{"store": "session", "path": "/kv/big", "content": "small again"})

	// A fork copies a running session's brain and leaves the source alone.
	fork := toolJSON[sessionStarted](t, other, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "copy", "from": run.SessionID})
	if fork.Mode != "forked" {
		t.Fatalf("fork: %+v", fork)
	}
	copied := toolJSON[brainEntry](t, other, "brain_get", map[string]any{"path": "/fs/RECOVERY.md"})
	toolJSON[brainEntry](t, other, "brain_put", map[string]any{"store": "session", "path": "/fs/RECOVERY.md", "content": "the fork's own"})
	if src := toolJSON[brainEntry](t, writer, "brain_get", map[string]any{"path": "/fs/RECOVERY.md"}); src.Version != copied.Version {
		t.Fatalf("the source changed with the fork: %+v vs %+v", src, copied)
	}

	// An admin's oversight read over HTTP, journalled; nobody else's.
	path := "/v1/sessions/" + run.SessionID + "/brain"
	if r := s.do(t, "GET", path+"?path=/fs/RECOVERY.md", s.AdminKey, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"racer `) {
		t.Fatalf("admin read: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "GET", path, s.AdminKey, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"/kv/big"`) {
		t.Fatalf("admin listing: %d %.300s", r.Status, r.Body)
	}
	if r := s.do(t, "GET", path+"?path=/fs/nothing", s.AdminKey, nil); r.Status != 404 {
		t.Fatalf("admin read of nothing: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "GET", path, tm.writer.Token, nil); r.Status != 403 {
		t.Fatalf("a non-admin's oversight read: %d %s", r.Status, r.Body)
	}
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE tenant_id = $1 AND event_type = 'brain.admin_read'`, s.TenantID); n != 3 {
		t.Fatalf("brain.admin_read events: %d", n)
	}
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE tenant_id = $1 AND event_type = 'brain.put' AND payload::text LIKE '%racer%'`, s.TenantID); n != 0 {
		t.Fatal("a brain value reached the journal")
	}

	// An adoption hands the brain over; a prune drops it.
	toolJSON[map[string]any](t, writer, "session_end", map[string]any{"session_id": run.SessionID, "handoff_note": "see RECOVERY.md"})
	if code, _ := toolError(t, writer, "brain_put", map[string]any{"store": "session", "session": run.SessionID, "path": "/fs/late", "content": "x"}); code != "session.conflict" {
		t.Fatalf("a write into an ended session: %s", code)
	}
	toolJSON[sessionStarted](t, other, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "nightly-2", "from": run.SessionID})
	if e := toolJSON[brainEntry](t, other, "brain_get", map[string]any{"session": run.SessionID, "path": "/fs/RECOVERY.md"}); !strings.HasPrefix(e.Content, "racer ") {
		t.Fatalf("the adopter's read: %+v", e)
	}
	if code, _ := toolError(t, writer, "brain_get", map[string]any{"session": run.SessionID, "path": "/fs/RECOVERY.md"}); code != "access.not_found" {
		t.Fatalf("the previous owner reads the adopted brain: %s", code)
	}
	toolJSON[map[string]any](t, other, "session_end", map[string]any{"session_id": run.SessionID})
	decode[map[string]any](t, s.do(t, "POST", "/v1/sessions/"+run.SessionID+"/prune", s.AdminKey, nil), 200)
	if n := s.count(t, `SELECT count(*) FROM sessions.brain_entries WHERE tenant_id = $1 AND session_id = $2`, s.TenantID, run.SessionID); n != 0 {
		t.Fatalf("a pruned session kept %d brain entries", n)
	}
}
