package e2e

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	migrations "github.com/omlhub/oml/sql/migrations"
)

type searchOut struct {
	Hits []struct {
		Family       string `json:"family"`
		ID           string `json:"id"`
		Workarea     string `json:"workarea"`
		WorkareaPath string `json:"workarea_path"`
		Title        string `json:"title"`
		Snippet      string `json:"snippet"`
		SessionID    string `json:"session_id"`
		Actor        string `json:"actor"`
	} `json:"hits"`
}

// what lists a search's hits as family:title, sorted.
func (o searchOut) what() []string {
	var out []string
	for _, h := range o.Hits {
		out = append(out, h.Family+":"+h.Title)
	}
	slices.Sort(out)
	return out
}

// search (issue 15) over every corpus — feed events, promoted
// knowledge-base pages, the caller's own session brains — never returns a
// row the caller may not read: a held page, an event in a denied subtree,
// another agent's brain, another tenant's event.
func TestSearch(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	vault := s.createWorkarea(t, "universe.procurement.metals-crew", "vault")
	s.grant(t, tm.author2.KeyID, "universe.procurement.metals-crew.vault", "reader", "deny")
	a := s.mcpSession(t, tm.writer.Token, "2026-07-28")
	b := s.mcpSession(t, tm.author2.Token, "2026-07-28")

	toolJSON[map[string]any](t, a, "signal_append", map[string]any{"workarea": tm.crew.ID, "kind": "signal", "body": "Zebrafish smelter restarted at dawn."})
	toolJSON[map[string]any](t, a, "signal_append", map[string]any{"workarea": vault.ID, "kind": "idea", "body": "Zebrafish vault combination changes monthly."})
	page := toolJSON[kbPage](t, a, "brain_put", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": "/fs/zebrafish.md", "content": "Zebrafish supplier notes."})
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, page.ArtifactID), 200)
	doc := toolJSON[document](t, a, "artifact_publish", map[string]any{"workarea": tm.crew.ID, "format": "markdown", "content": "# Zebrafish report\n\nAll good."})
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, doc.ReviewID), 200)
	toolJSON[document](t, a, "artifact_publish", map[string]any{"workarea": tm.crew.ID, "format": "markdown", "content": "# Zebrafish held report"})
	toolJSON[kbPage](t, a, "brain_put", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": "/fs/held.md", "content": "Zebrafish held draft."})
	mine := toolJSON[sessionStarted](t, a, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "zf"})
	toolJSON[brainEntry](t, a, "brain_put", map[string]any{"store": "session", "path": "/kv/zf", "content": "Zebrafish private working note."})
	theirs := toolJSON[sessionStarted](t, b, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "zf"})
	toolJSON[brainEntry](t, b, "brain_put", map[string]any{"store": "session", "path": "/kv/other", "content": "Zebrafish someone else's note."})
	asked := toolJSON[struct {
		QuestionID string `json:"question_id"`
	}](t, b, "question_post", map[string]any{"workarea": tm.crew.ID, "body": "Which zebrafish supplier?"})
	toolJSON[map[string]any](t, a, "answer_post", map[string]any{"question_id": asked.QuestionID, "body": "The zebrafish one in Accra."})
	other := s.bootstrapTenant(t, "globex")
	ow := decode[workareaInfo](t, s.do(t, "POST", "/v1/workareas", other, map[string]any{"parent": "universe", "name": "ops"}), 201)
	ok := decode[issuedKey](t, s.do(t, "POST", "/v1/keys", other, map[string]any{"principal": "globex-writer", "role": "writer"}), 201)
	for _, sc := range []string{"reader", "writer"} {
		decode[map[string]any](t, s.do(t, "POST", "/v1/grants", other, map[string]any{"key_id": ok.KeyID, "workarea": ow.ID, "scope": sc, "effect": "allow"}), 201)
	}
	toolJSON[map[string]any](t, s.mcpSession(t, ok.Token, "2026-07-28"), "signal_append", map[string]any{"workarea": ow.ID, "kind": "signal", "body": "Zebrafish foreign secret."})

	search := func(key string, args map[string]any) searchOut {
		t.Helper()
		args["query"] = "zebrafish"
		return toolJSON[searchOut](t, s.mcpSession(t, key, "2026-07-28"), "search", args)
	}
	check := func(who string, got searchOut, want ...string) {
		t.Helper()
		slices.Sort(want)
		if g := got.what(); !slices.Equal(g, want) {
			t.Errorf("%s: %v, want %v", who, g, want)
		}
	}
	docHit := "document:/doc/" + doc.ArtifactID
	check("the writer", search(tm.writer.Token, map[string]any{}),
		"event:signal", "event:idea", "event:question", "event:answer", "page:/fs/zebrafish.md", "brain:/kv/zf", docHit)
	check("author2 (vault denied)", search(tm.author2.Token, map[string]any{}),
		"event:signal", "event:question", "event:answer", "page:/fs/zebrafish.md", "brain:/kv/other", docHit)
	check("the reader", search(tm.reader.Token, map[string]any{}),
		"event:signal", "event:idea", "event:question", "event:answer", "page:/fs/zebrafish.md", docHit)
	check("the other tenant", search(ok.Token, map[string]any{}), "event:signal")
	check("the writer in the vault", search(tm.writer.Token, map[string]any{"workarea": vault.ID}), "event:idea")
	check("the writer's session", search(tm.writer.Token, map[string]any{"session_id": mine.SessionID}), "brain:/kv/zf")
	if code, _ := toolError(t, a, "search", map[string]any{"query": "zebrafish", "session_id": theirs.SessionID}); code != "access.not_found" {
		t.Fatalf("another's session: %s", code)
	}
	for who, args := range map[string]map[string]any{
		"author2 in the vault":       {"query": "zebrafish", "workarea": vault.ID},
		"another tenant's workarea":  {"query": "zebrafish", "workarea": ow.ID},
		"an unknown session":         {"query": "zebrafish", "session_id": "ses_nothing"},
		"another tenant's workarea2": {"query": "zebrafish", "workarea": "universe.ops"},
	} {
		if code, _ := toolError(t, b, "search", args); code != "access.not_found" {
			t.Errorf("%s: %s", who, code)
		}
	}
	for who, args := range map[string]map[string]any{
		"no query":        {"query": " "},
		"both scopes":     {"query": "x", "workarea": tm.crew.ID, "session_id": mine.SessionID},
		"a large limit":   {"query": "x", "limit": 101},
		"a long query":    {"query": strings.Repeat("x", 1001)},
		"a wrong type":    {"query": 7},
		"an extra field":  {"query": "x", "scope": "y"},
		"only exclusions": {"query": "-zebrafish -x"},
	} {
		if code, body := toolError(t, a, "search", args); code != "request.validation" {
			t.Errorf("%s: %s %s", who, code, body)
		}
	}
	got := search(tm.writer.Token, map[string]any{"workarea": vault.ID, "limit": 1})
	if len(got.Hits) != 1 || !strings.Contains(strings.ToLower(got.Hits[0].Snippet), "**zebrafish**") || got.Hits[0].WorkareaPath == "" {
		t.Fatalf("a limited search: %+v", got)
	}
	// HTTP, as the CLI calls it.
	r := decode[searchOut](t, s.do(t, "GET", "/v1/search?query="+url.QueryEscape("zebrafish")+"&session_id="+mine.SessionID, tm.writer.Token, nil), 200)
	if len(r.Hits) != 1 || r.Hits[0].Family != "brain" || r.Hits[0].SessionID != mine.SessionID {
		t.Fatalf("HTTP search: %+v", r)
	}
	if out := s.mustOML(t, tm.writer.Token, "search", "zebrafish", "--workarea", tm.crew.ID); !strings.Contains(out, "/fs/zebrafish.md") {
		t.Fatalf("oml search: %s", out)
	}
	// The backfill (migration 0037) rebuilds the events and brains corpus
	// from the journal and the brains as they are.
	before := s.count(t, "SELECT count(*) FROM retrieval.search_rows")
	backfill, err := migrations.FS.ReadFile("0037_search_backfill.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	s.sql(t, "DELETE FROM retrieval.search_rows")
	s.sql(t, string(backfill))
	if after := s.count(t, "SELECT count(*) FROM retrieval.search_rows"); after != before || before < 6 {
		t.Fatalf("backfill: %d rows, %d before", after, before)
	}
	check("the writer after the backfill", search(tm.writer.Token, map[string]any{"session_id": mine.SessionID}), "brain:/kv/zf")

	// An admin prunes the writer's ended session: its brain leaves search.
	toolJSON[map[string]any](t, a, "session_end", map[string]any{"session_id": mine.SessionID})
	decode[map[string]any](t, s.do(t, "POST", "/v1/sessions/"+mine.SessionID+"/prune", s.AdminKey, nil), 200)
	check("the writer after the prune", search(tm.writer.Token, map[string]any{"workarea": tm.crew.ID}),
		"event:signal", "event:idea", "event:question", "event:answer", "page:/fs/zebrafish.md", docHit)
}
