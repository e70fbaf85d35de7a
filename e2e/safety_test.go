package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The safety pass (issue 10): refused input is a typed answer on the real
// binaries, never a 500 and never a stopped replica.

// refusedArgs are argument sets every tool must answer with a typed
// result: none, each property of the wrong type, unknown ids (with sane
// and absurd numbers), NUL in every string, and field names in capitals.
func refusedArgs(t testing.TB, tool *mcp.Tool) map[string]map[string]any {
	t.Helper()
	raw, err := json.Marshal(tool.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("%s input schema: %v", tool.Name, err)
	}
	sets := map[string]map[string]any{
		"none": {}, "wrong types": {}, "unknown ids": {}, "absurd numbers": {}, "NUL": {}, "capitals": {}, "stray field": {"boss": "x"},
	}
	for name, p := range schema.Properties {
		kind := "object"
		switch ty := p.Type.(type) {
		case string:
			kind = ty
		case []any:
			for _, v := range ty {
				if v != "null" {
					kind, _ = v.(string)
				}
			}
		}
		switch kind {
		case "string":
			sets["wrong types"][name] = 7
			sets["unknown ids"][name] = "nope_01J0000000000000000000000"
			sets["absurd numbers"][name] = strings.Repeat("z", 300)
			sets["NUL"][name] = "nope\x00id"
		case "integer", "number":
			sets["wrong types"][name] = "seven"
			sets["unknown ids"][name] = 1
			sets["absurd numbers"][name] = -1 << 62
			sets["NUL"][name] = 1
		case "array":
			sets["wrong types"][name] = "not an array"
			sets["unknown ids"][name] = []string{"nope_01J0000000000000000000000"}
			sets["absurd numbers"][name] = make([]string, 1000)
			sets["NUL"][name] = []string{"x\x00"}
		default:
			sets["wrong types"][name] = []int{1}
		}
		sets["capitals"][strings.ToUpper(name)] = sets["unknown ids"][name]
	}
	return sets
}

// A test calls every tool with refused arguments, from an admin, an
// operator and a key without grants, and checks every answer is a typed
// result and that the server still answers afterwards.
func TestSafetyEveryToolSurvivesRefusedArguments(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	keys := map[string]string{
		"admin":    s.AdminKey,
		"operator": s.issueKey(t, "op", "operator").Token,
		"no grant": s.issueKey(t, "stranger", "writer").Token,
	}
	admin := s.mcpSession(t, s.AdminKey, "2025-11-25")
	list, err := admin.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) < 10 {
		t.Fatalf("tools/list holds %d tools", len(list.Tools))
	}
	// oml_attach's status path is where a refused call used to panic.
	extra := map[string]map[string]any{
		"status of an unknown session": {"action": "status", "upload_session": "ups_01J0000000000000000000000"},
		"status without a session":     {"action": "status"},
		"open without fields":          {"action": "open"},
		"open with nonsense":           {"action": "open", "media_type": "x", "size_bytes": -1, "expected_digest": "sha256:zz"},
	}
	calls := 0
	for who, key := range keys {
		cs := s.mcpSession(t, key, "2026-07-28")
		for _, tool := range list.Tools {
			sets := refusedArgs(t, tool)
			if tool.Name == "oml_attach" {
				for k, v := range extra {
					sets[k] = v
				}
			}
			for set, args := range sets {
				if _, ok := args["wait_seconds"]; !ok && (tool.Name == "inbox_wait" || tool.Name == "notify_wait") {
					args["wait_seconds"] = 0 // a valid wait would sit out its 30 s
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool.Name, Arguments: args})
				if err != nil {
					t.Fatalf("%s, %s, %s: not a tool result: %v", who, tool.Name, set, err)
				}
				calls++
				checkTypedResult(t, who+", "+tool.Name+", "+set, tool, res)
			}
		}
	}
	if r := s.do(t, "GET", "/healthz", "", nil); r.Status != 200 {
		t.Fatalf("after %d refused calls /healthz answers %d", calls, r.Status)
	}
	select {
	case err := <-s.done:
		t.Fatalf("oml-server exited: %v", err)
	default:
	}
	if sc, isErr := callTool(t, admin, "version", map[string]any{}); isErr {
		t.Fatalf("version after the refused calls: %s", sc)
	}
}

// checkTypedResult fails t unless res is a success with structured
// content or an isError result carrying {"error": {code, rule, message,
// retryable}}, never internal, and unless its structured content matches
// the output schema tools/list declared for the tool (a client that
// validates results, as the TypeScript SDK does, reads it).
func checkTypedResult(t testing.TB, what string, tool *mcp.Tool, res *mcp.CallToolResult) {
	t.Helper()
	body, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		t.Fatalf("%s: no structured content (%v)", what, err)
	}
	checkOutputSchema(t, what, tool, body)
	if !res.IsError {
		return
	}
	var env struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error == nil {
		t.Fatalf("%s: isError without an error envelope: %s", what, body)
	}
	for _, field := range []string{"code", "rule", "message"} {
		if v, _ := env.Error[field].(string); v == "" {
			t.Fatalf("%s: error lacks %q: %s", what, field, body)
		}
	}
	if _, ok := env.Error["retryable"].(bool); !ok {
		t.Fatalf("%s: error lacks retryable: %s", what, body)
	}
	if env.Error["code"] == "internal" {
		t.Fatalf("%s: refused input answered internal: %s", what, body)
	}
}

// checkOutputSchema validates a result's structured content against the
// tool's declared output schema.
func checkOutputSchema(t testing.TB, what string, tool *mcp.Tool, body []byte) {
	t.Helper()
	raw, err := json.Marshal(tool.OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("%s: output schema: %v", tool.Name, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: resolve output schema: %v", tool.Name, err)
	}
	var instance any
	if err := json.Unmarshal(body, &instance); err != nil {
		t.Fatal(err)
	}
	if err := resolved.Validate(instance); err != nil {
		t.Fatalf("%s: structured content does not match %s's output schema: %v\n%s", what, tool.Name, err, body)
	}
}

// Every tool's success output matches the output schema it declares.
func TestSafetySuccessesMatchOutputSchemas(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	quote := tm.promote(t, tm.writer, tm.reviewer, tm.crew.ID, "quote", "Accra Metals quoted 412 USD/t.")
	cs := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.grant(t, tm.writer.KeyID, "universe.procurement", "dreamer.propose", "allow")
	other := tm.promote(t, tm.author2, tm.reviewer, tm.crew.ID, "other", "Another supplier quoted 420 USD/t.")
	page := decode[kbPage](t, s.do(t, "PUT", "/v1/kb?workarea="+tm.crew.ID+"&path=/fs/plan.md", tm.author2.Token, "plan"), 202)
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, page.ArtifactID), 200)
	doc := decode[document](t, s.do(t, "POST", "/v1/documents", tm.author2.Token, map[string]any{"workarea": tm.crew.ID, "format": "markdown",
		"content": "# Plan\n\nAccra first."}), 202)
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, doc.ReviewID), 200)
	decode[document](t, s.do(t, "POST", "/v1/documents/"+doc.ArtifactID+"/versions", tm.author2.Token, map[string]any{"content": "# Plan\n\nTema."}), 202)
	asked := toolJSON[struct {
		QuestionID string `json:"question_id"`
	}](t, s.mcpSession(t, tm.author2.Token, "2025-11-25"), "question_post", map[string]any{"workarea": tm.crew.ID, "body": "Which supplier?"})
	// session_end is listed before session_start: it ends one started here.
	pre := toolJSON[struct {
		SessionID string `json:"session_id"`
	}](t, cs, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "to-end"})
	sub := toolJSON[struct {
		SubscriptionID string `json:"subscription_id"`
	}](t, cs, "notify_subscribe", map[string]any{"kinds": []string{"answer"}})
	toolJSON[map[string]any](t, cs, "brain_put", map[string]any{"store": "session", "session": pre.SessionID, "path": "/fs/RECOVERY.md", "content": "step 1"})
	cmt := toolJSON[comment](t, cs, "comment_post", map[string]any{"artifact_id": doc.ArtifactID, "body": "First.", "offset": 0})
	calls := map[string]map[string]any{
		"comment_resolve":    {"comment_id": cmt.CommentID, "resolved": true},
		"session_start":      {"workarea": tm.crew.ID, "name": "schema-check"},
		"session_end":        {"session_id": pre.SessionID, "handoff_note": "done"},
		"session_list":       {"workarea": tm.crew.ID},
		"session_brief":      {"workarea": tm.crew.ID},
		"brain_get":          {"session": pre.SessionID, "path": "/fs/RECOVERY.md"},
		"brain_put":          {"store": "session", "session": pre.SessionID, "path": "/kv/step", "content": "2"},
		"brain_list":         {"session": pre.SessionID, "prefix": "/fs/"},
		"brain_history":      {"workarea": tm.crew.ID, "path": "/fs/plan.md"},
		"search":             {"query": "Accra plan", "workarea": tm.crew.ID},
		"artifact_publish":   {"workarea": tm.crew.ID, "format": "html", "title": "T", "content": "<p>x</p>"},
		"artifact_update":    {"artifact_id": doc.ArtifactID, "content": "# Plan\n\nLagos.", "base_version": doc.Version},
		"artifact_draft":     {"artifact_id": doc.ArtifactID, "content": "draft"},
		"artifact_get":       {"artifact_id": doc.ArtifactID},
		"artifact_versions":  {"artifact_id": doc.ArtifactID},
		"artifact_list":      {"workarea": tm.crew.ID},
		"comment_post":       {"artifact_id": doc.ArtifactID, "body": "Why?", "quote": "Accra"},
		"comment_list":       {"artifact_id": doc.ArtifactID},
		"brain_revert":       {"workarea": tm.crew.ID, "path": "/fs/plan.md", "version": page.Version},
		"version":            {},
		"whoami":             {},
		"oml_workarea_info":  {"workarea": tm.crew.ID},
		"oml_recall":         {"query": "Accra Metals quote", "scope": tm.crew.ID},
		"oml_remember":       {"workarea": tm.crew.ID, "claim_key": "new", "text": "A new memory."},
		"oml_learn":          {"workarea": tm.crew.ID, "claim_key": "derived", "text": "A derived fact.", "derives_from": []string{quote}},
		"oml_my_work":        {},
		"oml_graph":          {"scope": tm.crew.ID, "roots": []string{quote}},
		"oml_relate_propose": {"kind": "claim", "label": "supports", "from": quote, "to": other},
		"oml_attach":         {"action": "open", "media_type": "text/plain", "size_bytes": 5, "expected_digest": "sha256:" + strings.Repeat("0", 64)},
		"oml_events_tail":    {"scope": tm.crew.ID, "after_seq": 0},
		"question_post":      {"workarea": tm.crew.ID, "body": "Ship?", "options": []string{"yes", "no"}, "expires_in_seconds": 600},
		"answer_post":        {"question_id": asked.QuestionID, "body": "Accra"},
		"signal_append":      {"workarea": tm.crew.ID, "kind": "approval", "body": "Ship it?", "expires_in_seconds": 600, "on_expiry": "approve"},
		"inbox_read":         {"workarea": tm.crew.ID},
		"inbox_wait":         {"workarea": tm.crew.ID, "wait_seconds": 0},
		"feed_read":          {"workarea": tm.crew.ID},
		"notify_subscribe":   {"kinds": []string{"signal", "approval"}, "workarea": tm.crew.ID, "drop_own": true},
		"notify_unsubscribe": {"subscription_id": sub.SubscriptionID},
		"notify_list":        {},
		"notify_wait":        {"wait_seconds": 0},
	}
	for _, tool := range list.Tools {
		args, ok := calls[tool.Name]
		if !ok {
			t.Errorf("no success case for %s", tool.Name)
			continue
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool.Name, Arguments: args})
		if err != nil || res.IsError {
			body, _ := json.Marshal(res)
			t.Fatalf("%s: %v %s", tool.Name, err, body)
		}
		checkTypedResult(t, tool.Name, tool, res)
	}
}

// NUL, bytes that are not UTF-8 and case-folded field names are
// request.validation at the boundary, never a 500, and write nothing.
func TestBadInputNeverInternal(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	promoted := s.promote(t, tm, tm.crew.ID, "promoted", "", "Accra Metals holds its Q1 price.")
	held := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token,
		map[string]any{"workarea": tm.crew.ID, "claim_key": "held", "text": "Waiting for review."}), 201)
	srv, ok := s.serve(t, tm.reviewer.Token)
	if !ok || srv.Item.ArtifactID != held.ArtifactID {
		t.Fatalf("serve: %v %+v", ok, srv)
	}
	seq := func() int64 {
		return s.count(t, `SELECT coalesce(max(seq), 0) FROM platform.journal_events WHERE tenant_id = $1`, s.TenantID)
	}
	before := seq()

	w := tm.writer.Token
	cases := []struct {
		name, method, path, key string
		body                    any
		headers                 []string
	}{
		{"NUL in a memory's text", "POST", "/v1/memories", w, `{"workarea":"` + tm.crew.ID + `","claim_key":"k1","text":"a\u0000b"}`, nil},
		{"NUL in a claim key", "POST", "/v1/memories", w, `{"workarea":"` + tm.crew.ID + `","claim_key":"k\u0000","text":"t"}`, nil},
		{"NUL in a field name", "POST", "/v1/memories", w, `{"workarea":"` + tm.crew.ID + `","claim_key":"k1","text":"t","x\u0000":1}`, nil},
		{"NUL in a workarea name", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"a\u0000b"}`, nil},
		{"NUL in a verdict reason", "POST", "/v1/reviews/" + srv.ServeID + "/verdict", tm.reviewer.Token, `{"verdict":"approve","reason":"ok\u0000"}`, nil},
		{"NUL in a demote reason", "POST", "/v1/artifacts/" + promoted + "/demote", s.AdminKey, `{"reason":"stale\u0000"}`, nil},
		{"NUL in a ban reason", "POST", "/v1/bans", s.AdminKey, `{"principal":"writer-2","reason":"spam\u0000"}`, nil},
		{"NUL in a recall query", "POST", "/v1/recall", w, `{"query":"price\u0000","scope":"` + tm.crew.ID + `"}`, nil},
		{"not UTF-8 in a body", "POST", "/v1/memories", w, "{\"workarea\":\"" + tm.crew.ID + "\",\"claim_key\":\"k1\",\"text\":\"\xff\"}", nil},
		{"QUERY is not query", "POST", "/v1/recall", w, `{"QUERY":"price","scope":"` + tm.crew.ID + `"}`, nil},
		{"Text is not text", "POST", "/v1/memories", w, `{"workarea":"` + tm.crew.ID + `","claim_key":"k1","Text":"t"}`, nil},
		{"NUL in a path id", "GET", "/v1/artifacts/art_%00x", w, nil, nil},
		{"not UTF-8 in a path id", "GET", "/v1/artifacts/art_%FFx", w, nil, nil},
		{"NUL in a workarea path id", "GET", "/v1/workareas/universe%00", w, nil, nil},
		{"NUL in a demote path id", "POST", "/v1/artifacts/art_%00/demote", s.AdminKey, `{"reason":"r"}`, nil},
		{"not UTF-8 in a query value", "GET", "/v1/memories/mine?state=%FF", w, nil, nil},
		{"NUL in a query value", "GET", "/v1/memories/mine?workarea=%00", w, nil, nil},
		{"not UTF-8 in a query name", "GET", "/v1/memories/mine?%FF=1", w, nil, nil},
		{"Idempotency-Key not UTF-8", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"idem"}`, []string{"Idempotency-Key", "k\xff\xfe"}},
		{"Idempotency-Key not UTF-8 on a memory", "POST", "/v1/memories", w, `{"workarea":"` + tm.crew.ID + `","claim_key":"k2","text":"t"}`, []string{"Idempotency-Key", "\xff"}},
		{"Idempotency-Key too long", "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"idem"}`, []string{"Idempotency-Key", strings.Repeat("k", 300)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, c.method, c.path, c.key, c.body, c.headers...)
			if r.Status != 400 || r.code() != "request.validation" {
				t.Fatalf("got %d %s, want 400 request.validation: %.300s", r.Status, r.code(), r.Body)
			}
		})
	}
	t.Run("bearer token not UTF-8", func(t *testing.T) {
		r := s.do(t, "GET", "/v1/whoami", "oml_k_\xff\xfe"+strings.Repeat("A", 46), nil)
		if r.Status != 401 || r.code() != "auth.invalid_key" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	t.Run("NUL in oml_remember", func(t *testing.T) {
		cs := s.mcpSession(t, w, "2026-07-28")
		code, sc := toolError(t, cs, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "k3", "text": "a\x00b"})
		if code != "request.validation" || !strings.Contains(string(sc), "text") {
			t.Fatalf("got %s", sc)
		}
		code, sc = toolError(t, cs, "oml_recall", map[string]any{"QUERY": "price", "scope": tm.crew.ID})
		if code != "request.validation" || !strings.Contains(string(sc), "QUERY") {
			t.Fatalf("got %s", sc)
		}
	})
	if after := seq(); after != before {
		t.Fatalf("refused requests wrote journal events: seq %d → %d", before, after)
	}
	// The serve was not consumed and the claim not demoted by the refusals.
	decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, srv.ServeID, "approve"), 200)
	r := s.do(t, "POST", "/v1/artifacts/"+promoted+"/demote", s.AdminKey, `{"reason":"stale"}`)
	if got := decode[struct {
		State string `json:"state"`
	}](t, r, 200); got.State != "demoted" {
		t.Fatalf("demote after the refusals: %s", r.Body)
	}
}

// A tenant named in a body or in tool arguments is ignored in favour of
// the key's (D6, seed 000), not refused.
func TestSafetyTenantFieldIgnored(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	globex := s.bootstrapTenant(t, "globex")
	r := s.do(t, "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"procurement","tenant":"globex","tenant_id":"tn_globex"}`)
	created := decode[workareaInfo](t, r, 201)
	if n := s.count(t, `SELECT count(*) FROM access.workareas WHERE tenant_id = $1 AND id = $2`, s.TenantID, created.ID); n != 1 {
		t.Fatalf("the workarea is not in the key's tenant: %s", r.Body)
	}
	if r := s.do(t, "GET", "/v1/workareas/universe.procurement", globex, nil); r.Status != 404 {
		t.Fatalf("the other tenant sees it: %d %s", r.Status, r.Body)
	}
	cs := s.mcpSession(t, s.AdminKey, "2026-07-28")
	info := toolJSON[workareaInfo](t, cs, "oml_workarea_info", map[string]any{"workarea": "universe.procurement", "tenant": "globex"})
	if info.ID != created.ID {
		t.Fatalf("workarea info with a tenant argument: %+v", info)
	}
	// Only the top level is ignored: inside an object it is an unknown field.
	r = s.do(t, "POST", "/v1/workareas", s.AdminKey, `{"parent":"universe","name":"finance","crew":{"tenant":"globex"}}`)
	if r.Status != 400 || r.code() != "request.validation" {
		t.Fatalf("a nested tenant: %d %s", r.Status, r.Body)
	}
	r = s.do(t, "PATCH", "/v1/workareas/universe.procurement", s.AdminKey, `{"crew":{"name":"x","tenant":"globex"}}`)
	if r.Status != 400 || r.code() != "request.validation" {
		t.Fatalf("a nested tenant in a patch: %d %s", r.Status, r.Body)
	}
}

// Every response carries nosniff, and everything carries the deny-all
// Content-Security-Policy and frame denial: JSON, errors, the guide,
// health, MCP and an attachment download.
func TestSafetyHeaders(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	page := []byte("<script>alert(1)</script>\n")
	sum := sha256.Sum256(page)
	digest := hex.EncodeToString(sum[:])
	path := filepath.Join(t.TempDir(), "note.html")
	if err := os.WriteFile(path, page, 0o600); err != nil {
		t.Fatal(err)
	}
	var ses uploadSession
	if err := json.Unmarshal([]byte(s.mustOML(t, tm.writer.Token, "--json", "attach", path, "--media-type", "text/html", "--no-progress")), &ses); err != nil {
		t.Fatal(err)
	}
	rem := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{
		"workarea": tm.crew.ID, "claim_key": "page", "text": "A page, attached.", "attachments": []map[string]string{{"upload_session": ses.UploadSession}},
	}), 201)

	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	mcpHeaders := []string{"Accept", "application/json, text/event-stream"}
	for _, c := range []struct {
		name, method, path, key string
		body                    any
		headers                 []string
		status                  int
	}{
		{"JSON", "GET", "/v1/whoami", tm.writer.Token, nil, nil, 200},
		{"guide", "GET", "/v1/guide", tm.writer.Token, nil, nil, 200},
		{"healthz", "GET", "/healthz", "", nil, nil, 200},
		{"not found", "GET", "/v1/nowhere", tm.writer.Token, nil, nil, 404},
		{"no key", "GET", "/v1/whoami", "", nil, nil, 401},
		{"bad input", "GET", "/v1/artifacts/art_%00", tm.writer.Token, nil, nil, 400},
		{"MCP", "POST", "/mcp", tm.writer.Token, list, mcpHeaders, 200},
		{"GET /mcp", "GET", "/mcp", tm.writer.Token, nil, mcpHeaders, 405},
		{"attachment", "GET", "/v1/artifacts/" + rem.ArtifactID + "/attachments/" + digest, tm.writer.Token, nil, nil, 200},
	} {
		r := s.do(t, c.method, c.path, c.key, c.body, c.headers...)
		if r.Status != c.status {
			t.Fatalf("%s: %d %.300s", c.name, r.Status, r.Body)
		}
		checkSecurityHeaders(t, c.name, r.Header)
	}
}

func checkSecurityHeaders(t testing.TB, what string, h http.Header) {
	t.Helper()
	for name, want := range map[string]string{
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
		"X-Frame-Options":         "DENY",
	} {
		if got := h.Values(name); len(got) != 1 || got[0] != want {
			t.Fatalf("%s: %s = %q, want %q", what, name, got, want)
		}
	}
}
