package e2e

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// Bad input gets the typed error of DESIGN.md and writes nothing.
func TestBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	revoked := s.issueKey(t, "gone", "writer")
	s.mustOML(t, s.AdminKey, "key", "revoke", revoked.KeyID)

	state := func() [2]int64 {
		return [2]int64{
			s.count(t, `SELECT coalesce(max(seq), 0) FROM platform.journal_events WHERE tenant_id = $1`, s.TenantID),
			s.count(t, `SELECT count(*) FROM access.workareas`),
		}
	}
	before := state()

	big := `{"parent":"universe","name":"` + strings.Repeat("x", 10<<20) + `"}`
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	mcpHeaders := []string{"Accept", "application/json, text/event-stream"}
	cases := []struct {
		name    string
		method  string
		path    string
		key     string
		body    string
		headers []string
		status  int
		code    string
	}{
		{"malformed JSON", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe",`, nil, 400, "request.validation"},
		{"unknown field", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"a","owner":"globex"}`, nil, 400, "request.validation"},
		{"field name in capitals", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","NAME":"a"}`, nil, 400, "request.validation"},
		{"tenant ignored, the rest still checked", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"Not Valid","tenant":"globex"}`, nil, 400, "request.validation"},
		{"wrong type", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":7}`, nil, 400, "request.validation"},
		{"bad name", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"Not Valid"}`, nil, 400, "request.validation"},
		{"bad status", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"a","status":"golden"}`, nil, 400, "request.validation"},
		{"NUL in crew", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"a","crew":{"name":"x\u0000y"}}`, nil, 400, "request.validation"},
		{"crew with unknown field", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"a","crew":{"boss":"x"}}`, nil, 400, "request.validation"},
		{"tenant_id ignored, the grant still checked", "POST", "/v1/grants", s.AdminKey, `{"key_id":"` + revoked.KeyID + `","workarea":"universe","scope":"god","effect":"allow","tenant_id":"tn_x"}`, nil, 400, "request.validation"},
		{"10 MiB body", "POST", "/v1/workareas", s.AdminKey, big, nil, 413, "limit.size"},
		{"grant with wrong type", "POST", "/v1/grants", s.AdminKey, `{"key_id":1,"workarea":"universe","scope":"reader","effect":"allow"}`, nil, 400, "request.validation"},
		{"grant with bad scope", "POST", "/v1/grants", s.AdminKey, `{"key_id":"` + revoked.KeyID + `","workarea":"universe","scope":"god","effect":"allow"}`, nil, 400, "request.validation"},
		{"key with unknown role", "POST", "/v1/keys", s.AdminKey, `{"principal":"p","role":"root"}`, nil, 400, "request.validation"},
		{"no key", "POST", "/v1/workareas", "", `{"parent":"universe","name":"a"}`, nil, 401, "auth.missing_key"},
		{"bad key", "POST", "/v1/workareas", "oml_k_0000000000000000000000000000000000000000000000", `{"parent":"universe","name":"a"}`, nil, 401, "auth.invalid_key"},
		{"revoked key", "GET", "/v1/workareas/universe", revoked.Token, "", nil, 401, "auth.invalid_key"},
		{"revoked key on MCP", "POST", "/mcp", revoked.Token, list, mcpHeaders, 401, "auth.invalid_key"},
		{"foreign Origin on /mcp", "POST", "/mcp", s.AdminKey, list, append([]string{"Origin", "http://evil.example"}, mcpHeaders...), 403, "access.denied"},
		{"10 MiB body on /mcp", "POST", "/mcp", s.AdminKey, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + strings.Repeat("y", 10<<20) + `"}}`, mcpHeaders, 413, "limit.size"},
		{"GET /mcp", "GET", "/mcp", s.AdminKey, "", mcpHeaders, 405, "request.method_not_allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, c.method, c.path, c.key, c.body, c.headers...)
			if r.Status != c.status || r.code() != c.code {
				t.Fatalf("got %d %s, want %d %s: %.300s", r.Status, r.code(), c.status, c.code, r.Body)
			}
			var env struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal(r.Body, &env); err != nil {
				t.Fatal(err)
			}
			for _, field := range []string{"code", "rule", "message", "retryable"} {
				if _, ok := env.Error[field]; !ok {
					t.Fatalf("error lacks %q: %s", field, r.Body)
				}
			}
		})
	}
	// Tool arguments are strict too, and refusals are isError results.
	cs := s.mcpSession(t, s.AdminKey, "2026-07-28")
	for _, args := range []map[string]any{{"workarea": 5}, {"workarea": "universe", "owner": "globex"}, {"WORKAREA": "universe"}, {}} {
		sc, isErr := callTool(t, cs, "oml_workarea_info", args)
		if !isErr || !bytes.Contains(sc, []byte(`"error"`)) {
			t.Fatalf("args %v: isError=%v %s", args, isErr, sc)
		}
	}
	if after := state(); after != before {
		t.Fatalf("refused requests changed state: %v → %v", before, after)
	}
}

// Twenty concurrent identical creates under one idempotency key make one
// workarea; the same key with another body is refused.
func TestIdempotentCreate(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	body := `{"parent":"universe","name":"procurement"}`
	replies := make([]reply, 20)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Go(func() {
			replies[i] = s.do(t, "POST", "/v1/workareas", s.AdminKey, body, "Idempotency-Key", "setup/step-1")
		})
	}
	wg.Wait()
	var replays int
	var id string
	for _, r := range replies {
		w := decode[struct {
			ID     string `json:"id"`
			Replay bool   `json:"idempotent_replay"`
		}](t, r, 201)
		if id == "" {
			id = w.ID
		}
		if w.ID != id {
			t.Fatalf("two workareas made: %s and %s", id, w.ID)
		}
		if w.Replay {
			replays++
		}
	}
	if replays != 19 {
		t.Fatalf("replays = %d, want 19", replays)
	}
	if n := s.count(t, `SELECT count(*) FROM access.workareas WHERE path = 'universe.procurement'`); n != 1 {
		t.Fatalf("%d workareas", n)
	}
	if n := s.count(t, `SELECT count(*) FROM platform.idempotency_records`); n != 1 {
		t.Fatalf("%d idempotency records", n)
	}
	r := s.do(t, "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"finance"}`, "Idempotency-Key", "setup/step-1")
	if r.Status != 409 || r.code() != "idempotency.conflict" {
		t.Fatalf("reuse with another body: %d %s", r.Status, r.Body)
	}
	// The parent named by path or by id is one scope.
	r = s.do(t, "POST", "/v1/workareas", s.AdminKey, `{"parent":"`+s.RootID+`","name":"procurement"}`, "Idempotency-Key", "setup/step-1")
	if r.Status != 409 || r.code() != "idempotency.conflict" {
		t.Fatalf("same key, parent by id: %d %s", r.Status, r.Body)
	}
}

// A retried key issue returns the same key, never a second one, and never
// the token again: it is shown once and not stored.
func TestIdempotentKeyIssue(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	body := `{"principal":"agent-7","role":"writer"}`
	first := decode[issuedKey](t, s.do(t, "POST", "/v1/keys", s.AdminKey, body, "Idempotency-Key", "enrol/agent-7"), 201)
	again := decode[struct {
		issuedKey
		Replay bool `json:"idempotent_replay"`
	}](t, s.do(t, "POST", "/v1/keys", s.AdminKey, body, "Idempotency-Key", "enrol/agent-7"), 201)
	if first.Token == "" || again.Token != "" || again.KeyID != first.KeyID || !again.Replay {
		t.Fatalf("first %+v, again %+v", first, again)
	}
	if n := s.count(t, `SELECT count(*) FROM access.keys k JOIN access.principals p ON p.tenant_id = k.tenant_id AND p.id = k.principal_id WHERE p.name = 'agent-7'`); n != 1 {
		t.Fatalf("%d keys for agent-7", n)
	}
	if n := s.count(t, `SELECT count(*) FROM platform.idempotency_records WHERE response::text LIKE '%oml_k_%'`); n != 0 {
		t.Fatal("a token was stored in an idempotency record")
	}
}

// Editing one journal row makes `oml admin journal verify` fail and name it.
func TestJournalTamperDetected(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.createWorkarea(t, "universe", "procurement")
	s.createWorkarea(t, "universe.procurement", "metals-crew")
	out := s.mustOML(t, s.AdminKey, "admin", "journal", "verify")
	if !strings.Contains(out, "ok") {
		t.Fatalf("verify before tampering: %s", out)
	}
	s.sql(t, `UPDATE platform.journal_events SET payload = jsonb_set(payload, '{name}', '"forged"') WHERE tenant_id = $1 AND seq = 6`, s.TenantID)
	stdout, stderr, err := s.oml(t, s.AdminKey, "admin", "journal", "verify")
	if err == nil {
		t.Fatalf("verify after tampering exited 0: %s", stdout)
	}
	if !strings.Contains(stdout+stderr, "seq 6") {
		t.Fatalf("verify does not name seq 6: %s %s", stdout, stderr)
	}
}
