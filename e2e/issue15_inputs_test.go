package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// The new routes of issue 15 against an attacker's inputs: NUL, wrong
// types, zero values, unknown fields, another tenant's ids, concurrent
// duplicates. Every refusal is typed and changes nothing.
func TestIssue15Inputs(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_ENROL_TENANT=acme", "OML_ENROL_PER_HOUR=100")
	tm := newTeam(t, s)
	for name, c := range map[string]struct {
		body any
		code string
	}{
		"a NUL in the reason": {map[string]any{"reason": "a\x00b"}, "request.validation"},
		"a number":            {map[string]any{"reason": 42}, "request.validation"},
		"null":                {map[string]any{"reason": nil}, "request.validation"},
		"not an object":       {`["x"]`, "request.validation"},
		"an empty body":       {``, "request.validation"},
		"invalid UTF-8":       {"{\"reason\":\"\xff\"}", "request.validation"},
	} {
		if r := s.do(t, "POST", "/v1/enrol", "", c.body); r.code() != c.code {
			t.Errorf("enrol, %s: %d %s", name, r.Status, r.Body)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM access.enrolments`); n != 0 {
		t.Fatalf("refused requests left %d rows", n)
	}
	if r := s.do(t, "GET", "/v1/enrol/status?wait=-1", "oml_k_x", nil); r.Status != 401 {
		t.Errorf("status with a bad token and a bad wait: %d %s", r.Status, r.Body)
	}

	// Decisions: wrong types, and two admins deciding at once.
	req := decode[enrolled](t, s.do(t, "POST", "/v1/enrol", "", map[string]any{"reason": "racer"}), 201)
	var item string
	for _, it := range decode[inboxOut](t, s.do(t, "GET", "/v1/inbox?status=open", s.AdminKey, nil), 200).Items {
		if it.Kind == "enrol_request" {
			item = it.ID
		}
	}
	for name, body := range map[string]any{
		"grants not a list": map[string]any{"decision": "approved", "role": "reader", "grants": "universe"},
		"a role number":     map[string]any{"decision": "approved", "role": 7},
		"a NUL role":        map[string]any{"decision": "approved", "role": "read\x00er"},
		"no role":           map[string]any{"decision": "approved"},
		"role on a decline": map[string]any{"decision": "declined", "role": "reader"},
		"an unknown field":  map[string]any{"decision": "approved", "role": "reader", "admin": true},
	} {
		if r := s.do(t, "POST", "/v1/inbox/"+item+"/decide", s.AdminKey, body); r.code() != "request.validation" {
			t.Errorf("decide, %s: %d %s", name, r.Status, r.Body)
		}
	}
	statuses := make([]int, 4)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = s.do(t, "POST", "/v1/inbox/"+item+"/decide", s.AdminKey, map[string]any{"decision": "approved", "role": "reader"}).Status
		})
	}
	wg.Wait()
	if ok := strings.Count(fmt.Sprint(statuses), "200"); ok != 1 {
		t.Fatalf("concurrent decisions: %v", statuses)
	}
	if n := s.count(t, `SELECT count(*) FROM access.keys k JOIN access.enrolments e ON e.key_id = k.id WHERE e.id = $1`, req.RequestID); n != 1 {
		t.Fatalf("keys for one request: %d", n)
	}

	// Brains over HTTP: NUL, another tenant's session, a zero-value path.
	writer := s.mcpSession(t, tm.writer.Token, "2026-07-28")
	run := toolJSON[sessionStarted](t, writer, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "inputs"})
	toolJSON[brainEntry](t, writer, "brain_put", map[string]any{"store": "session", "path": "/kv/a", "content": "x"})
	brain := "/v1/sessions/" + run.SessionID + "/brain"
	for name, c := range map[string]struct {
		method, path string
		status       int
	}{
		"a NUL in the path":       {"DELETE", brain + "?path=/kv/a%00", 400},
		"no path":                 {"DELETE", brain, 400},
		"a repeated parameter":    {"GET", brain + "?prefix=/kv/&prefix=/fs/", 400},
		"path with a listing":     {"GET", brain + "?path=/kv/a&limit=5", 400},
		"a limit of zero":         {"GET", brain + "?limit=0", 200},
		"a limit too large":       {"GET", brain + "?limit=501", 422},
		"a forged cursor":         {"GET", brain + "?cursor=/etc/passwd", 400},
		"a session id not a ses_": {"GET", "/v1/sessions/art_1/brain", 404},
		"a NUL in the session id": {"GET", "/v1/sessions/ses_%00/brain", 400},
	} {
		if r := s.do(t, c.method, c.path, s.AdminKey, nil); r.Status != c.status {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	other := s.bootstrapTenant(t, "umbrella")
	if r := s.do(t, "GET", brain, other, nil); r.Status != 404 {
		t.Errorf("another tenant's admin reads the brain: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "DELETE", brain+"?path=/kv/a", other, nil); r.Status != 404 {
		t.Errorf("another tenant deletes from the brain: %d %s", r.Status, r.Body)
	}
	if e := toolJSON[brainEntry](t, writer, "brain_get", map[string]any{"path": "/kv/a"}); e.Content != "x" {
		t.Fatalf("the entry after the refusals: %+v", e)
	}
}
