package e2e

import (
	"strings"
	"testing"
)

type sessionStarted struct {
	SessionID        string   `json:"session_id"`
	Workarea         string   `json:"workarea"`
	Name             string   `json:"name"`
	Owner            string   `json:"owner"`
	Status           string   `json:"status"`
	Mode             string   `json:"mode"`
	Namespaces       []string `json:"namespaces"`
	RecoveryPath     string   `json:"recovery_path"`
	HandoffNote      *string  `json:"handoff_note"`
	AdoptedFrom      *string  `json:"adopted_from"`
	ForkedFrom       *string  `json:"forked_from"`
	IdempotentReplay bool     `json:"idempotent_replay"`
}

type sessionOut struct {
	SessionID   string  `json:"session_id"`
	Name        string  `json:"name"`
	Owner       string  `json:"owner"`
	OwnerKeyID  string  `json:"owner_key_id"`
	Status      string  `json:"status"`
	HandoffNote string  `json:"handoff_note"`
	AdoptedFrom *string `json:"adopted_from"`
	ForkedFrom  *string `json:"forked_from"`
}

type sessionList struct {
	Sessions   []sessionOut `json:"sessions"`
	NextCursor *string      `json:"next_cursor"`
}

func (l sessionList) find(id string) (sessionOut, bool) {
	for _, s := range l.Sessions {
		if s.SessionID == id {
			return s, true
		}
	}
	return sessionOut{}, false
}

// headSeq is the journal's head as a reader of the crew sees it.
func (tm team) headSeq(t *testing.T) int64 {
	t.Helper()
	return decode[tailOut](t, tm.s.do(t, "GET", "/v1/events?scope="+tm.crew.ID, tm.reader.Token, nil), 200).HeadSeq
}

// session_start is idempotent on the name per owner; an ended session is
// adopted with its handoff note, a running one forked; session_end by a
// non-owner is refused and writes nothing.
func TestSessionStartAdoptFork(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	a := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	b := s.mcpSession(t, tm.author2.Token, "2025-11-25")
	reader := s.mcpSession(t, tm.reader.Token, "2025-11-25")

	first := toolJSON[sessionStarted](t, a, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "nightly"})
	if first.Mode != "started" || first.Status != "running" || first.Owner != "writer-1" || first.HandoffNote != nil ||
		first.RecoveryPath != "/fs/RECOVERY.md" || len(first.Namespaces) != 2 || first.Namespaces[0] != "/fs/" || first.Namespaces[1] != "/kv/" {
		t.Fatalf("start: %+v", first)
	}
	again := toolJSON[sessionStarted](t, a, "session_start", map[string]any{"workarea": "universe.procurement.metals-crew", "name": "nightly"})
	if again.SessionID != first.SessionID || again.Mode != "resumed" {
		t.Fatalf("resume by path: %+v, want %s", again, first.SessionID)
	}
	keyed := map[string]any{"workarea": tm.crew.ID, "name": "nightly", "idempotency_key": "k1"}
	one := toolJSON[sessionStarted](t, a, "session_start", keyed)
	two := toolJSON[sessionStarted](t, a, "session_start", keyed)
	if one.SessionID != first.SessionID || one.IdempotentReplay || !two.IdempotentReplay || two.SessionID != first.SessionID {
		t.Fatalf("idempotency key: %+v then %+v", one, two)
	}
	theirs := toolJSON[sessionStarted](t, b, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "nightly"})
	if theirs.SessionID == first.SessionID || theirs.Owner != "writer-2" {
		t.Fatalf("two owners, one name, one session: %+v", theirs)
	}
	if code, _ := toolError(t, reader, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "x"}); code != "access.denied" {
		t.Fatalf("a reader starts a session: %s", code)
	}

	// Refusals that write nothing.
	stranger := s.mcpSession(t, s.issueKey(t, "stranger", "writer").Token, "2025-11-25")
	head := tm.headSeq(t)
	if code, _ := toolError(t, b, "session_end", map[string]any{"session_id": first.SessionID, "handoff_note": "mine now"}); code != "access.denied" {
		t.Fatalf("a non-owner ends a session: %s", code)
	}
	if code, _ := toolError(t, reader, "session_end", map[string]any{"session_id": first.SessionID}); code != "access.denied" {
		t.Fatalf("a reader ends a session: %s", code)
	}
	if code, _ := toolError(t, stranger, "session_end", map[string]any{"session_id": first.SessionID}); code != "access.not_found" {
		t.Fatalf("a key that cannot read the session ends it: %s", code)
	}
	if code, _ := toolError(t, stranger, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "x"}); code != "access.not_found" {
		t.Fatalf("a key that cannot read the workarea starts a session: %s", code)
	}
	if got := tm.headSeq(t); got != head {
		t.Fatalf("refusals wrote journal events: head %d → %d", head, got)
	}

	// The owner ends its active session (no session_id) with a note.
	ended := toolJSON[sessionOut](t, a, "session_end", map[string]any{"handoff_note": "pick up at step 3"})
	if ended.SessionID != first.SessionID || ended.Status != "ended" || ended.HandoffNote != "pick up at step 3" {
		t.Fatalf("end: %+v", ended)
	}
	if code, _ := toolError(t, a, "session_end", map[string]any{"session_id": first.SessionID}); code != "session.conflict" {
		t.Fatalf("ending an ended session: %s", code)
	}
	if code, _ := toolError(t, a, "session_end", map[string]any{}); code != "request.validation" {
		t.Fatalf("session_end without an active session: %s", code)
	}

	// B adopts it: same id, ownership moves, the note arrives.
	adopted := toolJSON[sessionStarted](t, b, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "nightly-a", "from": first.SessionID})
	if adopted.Mode != "adopted" || adopted.SessionID != first.SessionID || adopted.Owner != "writer-2" ||
		adopted.HandoffNote == nil || *adopted.HandoffNote != "pick up at step 3" || adopted.AdoptedFrom == nil || *adopted.AdoptedFrom != "writer-1" {
		t.Fatalf("adopt: %+v", adopted)
	}
	retry := toolJSON[sessionStarted](t, b, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "nightly-a", "from": first.SessionID})
	if retry.Mode != "resumed" || retry.SessionID != first.SessionID {
		t.Fatalf("a retried adoption resumes: %+v", retry)
	}
	if code, _ := toolError(t, b, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "nightly", "from": first.SessionID}); code != "session.conflict" {
		t.Fatalf("a pickup under a name the caller holds: %s", code)
	}

	// A running session is forked; the source stays A's and running.
	src := toolJSON[sessionStarted](t, a, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "research"})
	fork := toolJSON[sessionStarted](t, b, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "research-b", "from": src.SessionID})
	if fork.Mode != "forked" || fork.SessionID == src.SessionID || fork.Owner != "writer-2" || fork.ForkedFrom == nil || *fork.ForkedFrom != src.SessionID {
		t.Fatalf("fork: %+v", fork)
	}

	list := toolJSON[sessionList](t, reader, "session_list", map[string]any{"workarea": tm.crew.ID})
	if got, ok := list.find(first.SessionID); !ok || got.Owner != "writer-2" || got.AdoptedFrom == nil || *got.AdoptedFrom != "writer-1" || got.Status != "running" {
		t.Fatalf("list shows the adopted session as %+v (%v)", got, ok)
	}
	if got, ok := list.find(src.SessionID); !ok || got.Owner != "writer-1" || got.Status != "running" {
		t.Fatalf("the fork's source changed: %+v (%v)", got, ok)
	}
	if got, ok := list.find(fork.SessionID); !ok || got.ForkedFrom == nil || *got.ForkedFrom != src.SessionID {
		t.Fatalf("list shows the fork as %+v (%v)", got, ok)
	}
	if len(list.Sessions) != 4 {
		t.Fatalf("list holds %d sessions, want 4", len(list.Sessions))
	}
	paged := toolJSON[sessionList](t, reader, "session_list", map[string]any{"workarea": tm.crew.ID, "limit": 3})
	if len(paged.Sessions) != 3 || paged.NextCursor == nil {
		t.Fatalf("first page: %+v", paged)
	}
	rest := toolJSON[sessionList](t, reader, "session_list", map[string]any{"workarea": tm.crew.ID, "limit": 3, "cursor": *paged.NextCursor})
	if len(rest.Sessions) != 1 || rest.NextCursor != nil {
		t.Fatalf("second page: %+v", rest)
	}
	if empty := toolJSON[sessionList](t, stranger, "session_list", map[string]any{}); len(empty.Sessions) != 0 {
		t.Fatalf("a key without grants lists %d sessions", len(empty.Sessions))
	}
}

// An admin of the workarea may end another agent's session and reassign a
// running one over HTTP; a foreign tenant's session ids answer as missing.
func TestSessionAdminEndReassignAndTenancy(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	a := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	admin := s.mcpSession(t, s.AdminKey, "2025-11-25")

	victim := toolJSON[sessionStarted](t, a, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "stuck"})
	ended := toolJSON[sessionOut](t, admin, "session_end", map[string]any{"session_id": victim.SessionID, "handoff_note": "ended by the admin"})
	if ended.Status != "ended" || ended.Owner != "writer-1" {
		t.Fatalf("admin end: %+v", ended)
	}

	run := toolJSON[sessionStarted](t, a, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "long"})
	path := "/v1/sessions/" + run.SessionID + "/reassign"
	if r := s.do(t, "POST", path, tm.author2.Token, map[string]any{"to_key_id": tm.author2.KeyID}); r.Status != 403 || r.code() != "access.denied" {
		t.Fatalf("a writer reassigns: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "POST", path, s.AdminKey, map[string]any{"to_key_id": tm.reader.KeyID}); r.Status != 403 {
		t.Fatalf("reassigned to a reader: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "POST", path, s.AdminKey, map[string]any{"to_key_id": "key_01J0000000000000000000000"}); r.Status != 404 {
		t.Fatalf("reassigned to an unknown key: %d %s", r.Status, r.Body)
	}
	moved := decode[sessionOut](t, s.do(t, "POST", path, s.AdminKey, map[string]any{"to_key_id": tm.author2.KeyID}), 200)
	if moved.Owner != "writer-2" || moved.OwnerKeyID != tm.author2.KeyID || moved.Status != "running" {
		t.Fatalf("reassign: %+v", moved)
	}
	// The new owner's active session is the reassigned one: it ends it
	// without naming it.
	b := s.mcpSession(t, tm.author2.Token, "2025-11-25")
	if got := toolJSON[sessionOut](t, b, "session_end", map[string]any{"handoff_note": "done"}); got.SessionID != run.SessionID {
		t.Fatalf("the new owner's active session is %s, want %s", got.SessionID, run.SessionID)
	}
	if r := s.do(t, "POST", path, s.AdminKey, map[string]any{"to_key_id": tm.writer.KeyID}); r.Status != 409 || r.code() != "session.conflict" {
		t.Fatalf("reassigning an ended session: %d %s", r.Status, r.Body)
	}
	list := decode[sessionList](t, s.do(t, "GET", "/v1/sessions?workarea="+tm.crew.ID+"&status=ended", tm.reader.Token, nil), 200)
	if len(list.Sessions) != 2 {
		t.Fatalf("GET /v1/sessions?status=ended: %+v", list)
	}

	// Another tenant's admin sees none of it.
	foreign := s.bootstrapTenant(t, "globex")
	fc := s.mcpSession(t, foreign, "2025-11-25")
	if code, _ := toolError(t, fc, "session_end", map[string]any{"session_id": run.SessionID}); code != "access.not_found" {
		t.Fatalf("a foreign session_end: %s", code)
	}
	if r := s.do(t, "POST", path, foreign, map[string]any{"to_key_id": tm.writer.KeyID}); r.Status != 404 {
		t.Fatalf("a foreign reassign: %d %s", r.Status, r.Body)
	}
	if l := toolJSON[sessionList](t, fc, "session_list", map[string]any{}); len(l.Sessions) != 0 {
		t.Fatalf("a foreign tenant lists %d sessions", len(l.Sessions))
	}
	if r := s.do(t, "GET", "/v1/sessions", s.issueKey(t, "op", "operator").Token, nil); r.Status != 403 || r.code() != "access.verb_ceiling" {
		t.Fatalf("an operator lists sessions: %d %s", r.Status, r.Body)
	}
}

// The human prunes an ended session: the name stays taken and nobody
// picks the session up; refusals write nothing.
func TestSessionPrune(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	agent := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	start := func(name string) string {
		return toolJSON[struct {
			SessionID string `json:"session_id"`
		}](t, agent, "session_start", map[string]any{"workarea": tm.crew.ID, "name": name}).SessionID
	}
	running := start("still-running")
	old := start("old-run")
	toolJSON[map[string]any](t, agent, "session_end", map[string]any{"session_id": old, "handoff_note": "done"})
	prune := func(key, id string) reply { return s.do(t, "POST", "/v1/sessions/"+id+"/prune", key, nil) }

	if r := prune(tm.writer.Token, old); r.Status != 403 || r.code() != "access.denied" {
		t.Fatalf("a writer prunes: %d %s", r.Status, r.Body)
	}
	if r := prune(s.AdminKey, running); r.Status != 409 || r.code() != "session.conflict" {
		t.Fatalf("pruning a running session: %d %s", r.Status, r.Body)
	}
	if r := prune(s.AdminKey, old); r.Status != 200 || !strings.Contains(string(r.Body), `"pruned"`) {
		t.Fatalf("the admin prunes: %d %s", r.Status, r.Body)
	}
	head := s.count(t, `SELECT coalesce(max(seq), 0) FROM platform.journal_events WHERE tenant_id = $1`, s.TenantID)
	if code, _ := toolError(t, agent, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "old-run"}); code != "session.conflict" {
		t.Fatalf("a name a pruned session holds: %s", code)
	}
	other := s.mcpSession(t, tm.author2.Token, "2025-11-25")
	if code, _ := toolError(t, other, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "taking-over", "from": old}); code != "session.conflict" {
		t.Fatalf("adopting a pruned session: %s", code)
	}
	if r := prune(s.AdminKey, old); r.Status != 409 {
		t.Fatalf("pruning twice: %d %s", r.Status, r.Body)
	}
	if n := s.count(t, `SELECT coalesce(max(seq), 0) FROM platform.journal_events WHERE tenant_id = $1`, s.TenantID); n != head {
		t.Fatalf("refusals wrote %d events", n-head)
	}
}
