package e2e

import (
	"fmt"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type kbPage struct {
	Store         string `json:"store"`
	Workarea      string `json:"workarea"`
	Path          string `json:"path"`
	Content       string `json:"content"`
	Version       string `json:"version"`
	State         string `json:"state"`
	Deleted       bool   `json:"deleted"`
	ArtifactID    string `json:"artifact_id"`
	Revision      int    `json:"revision"`
	Author        string `json:"author"`
	BaseVersion   string `json:"base_version"`
	SourceSession string `json:"source_session"`
	OwnHeld       []struct {
		ArtifactID string `json:"artifact_id"`
	} `json:"own_held"`
}

type kbHistory struct {
	Versions []struct {
		Version    string `json:"version"`
		Revision   int    `json:"revision"`
		ArtifactID string `json:"artifact_id"`
		Deleted    bool   `json:"deleted"`
	} `json:"versions"`
	NextCursor *string `json:"next_cursor"`
}

// approveNext has the reviewer approve the next item, which must be
// artifact; it returns the verdict's reply.
func (s *server) approveNext(t testing.TB, key, artifact string) reply {
	t.Helper()
	srv, ok := s.serve(t, key)
	if !ok || srv.Item.ArtifactID != artifact {
		t.Fatalf("serve: want %s, got %v %+v", artifact, ok, srv)
	}
	return s.verdict(t, key, srv.ServeID, "approve")
}

// The knowledge base (issue 15) over the real binaries: a page put by one
// agent is invisible to another until a reviewer who is not its author
// approves it, then read, listed, recalled and listed as a resource; a
// stale if_version fails at submission and at promotion; delete and
// revert go through review; history lists the versions; brain_put with
// from copies a session brain entry citing the session.
func TestKnowledgeBase(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	a := s.mcpSession(t, tm.writer.Token, "2026-07-28")
	b := s.mcpSession(t, tm.author2.Token, "2026-07-28")
	const path = "/fs/design/supplier plan ü.md"
	get := func(cs *mcp.ClientSession) (kbPage, string) {
		t.Helper()
		sc, isErr := callTool(t, cs, "brain_get", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": path})
		if isErr {
			code, _ := toolError(t, cs, "brain_get", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": path})
			return kbPage{}, code
		}
		var p kbPage
		if err := jsonUnmarshal(string(sc), &p); err != nil {
			t.Fatal(err)
		}
		return p, ""
	}
	kbURIs := func(cs *mcp.ClientSession) []string {
		t.Helper()
		list, err := cs.ListResources(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range list.Resources {
			if strings.HasPrefix(r.URI, "oml://kb/") {
				out = append(out, r.URI)
			}
		}
		return out
	}

	v1 := toolJSON[kbPage](t, a, "brain_put", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": path,
		"content": "Zanzibar copper: buy from Accra Metals first.", "if_version": "absent"})
	if v1.State != "held" || v1.Revision != 0 || !strings.HasPrefix(v1.Version, "sha256:") || v1.Store != "project" {
		t.Fatalf("put: %+v", v1)
	}

	// Held: the author sees its own version, marked held; nobody else
	// sees anything.
	if p, code := get(a); code != "" || p.State != "held" || p.ArtifactID != v1.ArtifactID {
		t.Fatalf("the author's read: %+v %s", p, code)
	}
	if _, code := get(b); code != "access.not_found" {
		t.Fatalf("another agent reads a held page: %s", code)
	}
	if l := toolJSON[brainListOut](t, b, "brain_list", map[string]any{"store": "project", "workarea": tm.crew.ID}); len(l.Entries) != 0 {
		t.Fatalf("a held page listed: %+v", l)
	}
	if uris := kbURIs(b); len(uris) != 0 {
		t.Fatalf("a held page as a resource: %v", uris)
	}
	recall := func(key string) recallOut {
		return decode[recallOut](t, s.do(t, "POST", "/v1/recall", key, map[string]any{"scope": tm.crew.ID, "query": "Zanzibar copper"}), 200)
	}
	if r := recall(tm.author2.Token); len(r.Hits) != 0 {
		t.Fatalf("a held page recalled: %+v", r)
	}
	// The author is never served its own version (R2).
	if srv, ok := s.serve(t, tm.writer.Token); ok {
		t.Fatalf("the author was served: %+v", srv)
	}
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, v1.ArtifactID), 200)

	// Promoted: read, listed, recalled, a resource.
	p, code := get(b)
	if code != "" || p.State != "promoted" || p.Content != "Zanzibar copper: buy from Accra Metals first." || p.Version != v1.Version {
		t.Fatalf("after approval: %+v %s", p, code)
	}
	if l := toolJSON[brainListOut](t, b, "brain_list", map[string]any{"store": "project", "workarea": tm.crew.ID}); len(l.Entries) != 1 || l.Entries[0].Path != path {
		t.Fatalf("listing: %+v", l)
	}
	r := recall(tm.author2.Token)
	if len(r.Hits) != 1 || r.Hits[0].ArtifactID != v1.ArtifactID || r.Hits[0].ClaimKey != path {
		t.Fatalf("recall: %+v", r)
	}
	uris := kbURIs(b)
	want := "oml://kb/" + tm.crew.ID + "/design/supplier%20plan%20%C3%BC.md"
	if len(uris) != 1 || uris[0] != want {
		t.Fatalf("resources: %v, want %s", uris, want)
	}
	res, err := b.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uris[0]})
	if err != nil || res.Contents[0].Text != p.Content || res.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("reading the resource: %+v %v", res, err)
	}
	// A reader reads it over HTTP too; a key outside the workarea does not.
	httpGet := s.do(t, "GET", "/v1/kb?workarea="+tm.crew.ID+"&path="+url.QueryEscape(path), tm.reader.Token, nil)
	if got := decode[kbPage](t, httpGet, 200); got.Version != v1.Version {
		t.Fatalf("HTTP read: %+v", got)
	}
	outsider := s.issueKey(t, "outsider", "writer")
	if r := s.do(t, "GET", "/v1/kb?workarea="+tm.crew.ID+"&path="+url.QueryEscape(path), outsider.Token, nil); r.Status != 404 {
		t.Fatalf("an outsider's read: %d %s", r.Status, r.Body)
	}

	// A stale if_version fails at submission...
	code, body := toolError(t, b, "brain_put", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": path,
		"content": "mine", "if_version": "absent"})
	if code != "knowledge.conflict" || !strings.Contains(string(body), "current_version="+v1.Version) {
		t.Fatalf("a stale if_version at submission: %s %s", code, body)
	}
	// ...and at promotion: two writers hold v1; whichever is promoted
	// first wins, the other's approval is refused with the conflict.
	va := toolJSON[kbPage](t, a, "brain_put", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": path,
		"content": "Zanzibar copper: Accra Metals, then Lagos Alloys.", "if_version": v1.Version})
	vb := toolJSON[kbPage](t, b, "brain_put", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": path,
		"content": "Zanzibar copper: Lagos Alloys only.", "if_version": v1.Version})
	// A held version has no revision: its internal number would tell its
	// author how many versions others hold (R3).
	if va.Revision != 0 || vb.Revision != 0 {
		t.Fatalf("revisions of held versions: %d %d", va.Revision, vb.Revision)
	}
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, va.ArtifactID), 200)
	srv, ok := s.serve(t, tm.reviewer.Token)
	if !ok || srv.Item.ArtifactID != vb.ArtifactID {
		t.Fatalf("serve the stale version: %v %+v", ok, srv)
	}
	stale := s.verdict(t, tm.reviewer.Token, srv.ServeID, "approve")
	if stale.Status != 409 || !strings.Contains(string(stale.Body), "knowledge.conflict") || !strings.Contains(string(stale.Body), "current_version="+va.Version) {
		t.Fatalf("approving a stale version: %d %s", stale.Status, stale.Body)
	}
	decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, srv.ServeID, "reject"), 200)
	if p, _ := get(b); p.Version != va.Version {
		t.Fatalf("the head after the conflict: %+v", p)
	}

	// Delete: a held tombstone over HTTP (R1), reviewed like any version.
	del := decode[kbPage](t, s.do(t, "DELETE", "/v1/kb?workarea="+tm.crew.ID+"&path="+url.QueryEscape(path)+"&if_version="+va.Version,
		tm.author2.Token, nil), 202)
	if !del.Deleted || del.State != "held" {
		t.Fatalf("delete: %+v", del)
	}
	if p, _ := get(a); p.Version != va.Version {
		t.Fatalf("a held deletion took effect: %+v", p)
	}
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, del.ArtifactID), 200)
	if _, code := get(a); code != "access.not_found" {
		t.Fatalf("a deleted page: %s", code)
	}
	if r := recall(tm.author2.Token); len(r.Hits) != 0 {
		t.Fatalf("a deleted page recalled: %+v", r)
	}
	if uris := kbURIs(b); len(uris) != 0 {
		t.Fatalf("a deleted page as a resource: %v", uris)
	}

	// Revert: v1 back, through review.
	rev := toolJSON[kbPage](t, b, "brain_revert", map[string]any{"workarea": tm.crew.ID, "path": path, "version": v1.Version, "if_version": "absent"})
	if rev.State != "held" || rev.Version != v1.Version {
		t.Fatalf("revert: %+v", rev)
	}
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, rev.ArtifactID), 200)
	if p, _ := get(a); p.Content != "Zanzibar copper: buy from Accra Metals first." || p.Revision != 4 {
		t.Fatalf("after the revert: %+v", p)
	}

	// History: the promoted versions, newest first, the deletion included.
	h := toolJSON[kbHistory](t, b, "brain_history", map[string]any{"workarea": tm.crew.ID, "path": path})
	var revs []string
	for _, v := range h.Versions {
		revs = append(revs, fmt.Sprintf("%d:%v", v.Revision, v.Deleted))
	}
	if strings.Join(revs, " ") != "4:false 3:true 2:false 1:false" || h.NextCursor != nil {
		t.Fatalf("history: %v", revs)
	}
	h1 := toolJSON[kbHistory](t, b, "brain_history", map[string]any{"workarea": tm.crew.ID, "path": path, "limit": 2})
	if len(h1.Versions) != 2 || h1.NextCursor == nil {
		t.Fatalf("history page 1: %+v", h1)
	}
	h2 := toolJSON[kbHistory](t, b, "brain_history", map[string]any{"workarea": tm.crew.ID, "path": path, "limit": 2, "cursor": *h1.NextCursor})
	if len(h2.Versions) != 2 || h2.Versions[0].Revision != 2 || h2.NextCursor != nil {
		t.Fatalf("history page 2: %+v", h2)
	}
	old := toolJSON[kbPage](t, b, "brain_get", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": path, "version": va.Version})
	if old.Content != "Zanzibar copper: Accra Metals, then Lagos Alloys." {
		t.Fatalf("reading an earlier version: %+v", old)
	}

	// Without if_version the version written last wins: an older one
	// approved after it is refused at promotion.
	x1 := toolJSON[kbPage](t, a, "brain_put", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": "/fs/lww.md", "content": "first"})
	x2 := toolJSON[kbPage](t, b, "brain_put", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": "/fs/lww.md", "content": "second"})
	srv2 := decode[served](t, s.do(t, "POST", "/v1/reviews/serve", tm.reviewer.Token, map[string]any{"skip": []string{x1.ArtifactID}}), 200)
	if srv2.Item.ArtifactID != x2.ArtifactID {
		t.Fatalf("serve with a skip: %+v", srv2)
	}
	decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, srv2.ServeID, "approve"), 200)
	srv1, _ := s.serve(t, tm.reviewer.Token)
	if r := s.verdict(t, tm.reviewer.Token, srv1.ServeID, "approve"); srv1.Item.ArtifactID != x1.ArtifactID || r.Status != 409 || !strings.Contains(string(r.Body), "knowledge.conflict") {
		t.Fatalf("approving an older version after a newer one: %s %d %s", srv1.Item.ArtifactID, r.Status, r.Body)
	}
	decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, srv1.ServeID, "reject"), 200)
	// A page's versions are not a claim anyone continues with supersedes.
	if r := s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{"workarea": tm.crew.ID, "supersedes": x1.ArtifactID,
		"kind": "steering", "text": "Take over the page."}); r.Status != 404 || !strings.Contains(string(r.Body), "access.not_found") {
		t.Fatalf("supersedes on a page version: %d %s", r.Status, r.Body)
	}

	// From a session brain (seed 002's brain_promote): the page cites the
	// session; the workarea defaults to the active session's.
	run := toolJSON[sessionStarted](t, a, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "kb"})
	toolJSON[brainEntry](t, a, "brain_put", map[string]any{"store": "session", "path": "/kv/finding", "content": "Lagos Alloys ships in 3 weeks."})
	cp := toolJSON[kbPage](t, a, "brain_put", map[string]any{"store": "project", "path": "/fs/findings/lagos.md", "from": "/kv/finding"})
	if cp.SourceSession != run.SessionID || cp.Workarea != tm.crew.ID || cp.State != "held" {
		t.Fatalf("from a brain: %+v", cp)
	}
	if _, err := a.CallTool(t.Context(), &mcp.CallToolParams{Name: "brain_promote", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "(R1)") {
		t.Fatalf("brain_promote over MCP: %v", err)
	}

	// Refusals: 1 MiB + 1 byte before anything is stored, /kv/ in a
	// knowledge base, a page no one may write.
	big := strings.Repeat("x", 1<<20)
	if code, _ := toolError(t, a, "brain_put", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": "/fs/big", "content": big + "y"}); code != "limit.size" {
		t.Fatalf("1 MiB + 1: %s", code)
	}
	if n := s.count(t, "SELECT count(*) FROM admission.artifacts WHERE claim_key = '/fs/big'"); n != 0 {
		t.Fatalf("the refused page was stored: %d", n)
	}
	if code, _ := toolError(t, a, "brain_put", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": "/kv/x", "content": "x"}); code != "request.validation" {
		t.Fatalf("/kv/ in a knowledge base: %s", code)
	}
	rd := s.mcpSession(t, tm.reader.Token, "2026-07-28")
	if code, _ := toolError(t, rd, "brain_put", map[string]any{"store": "project", "workarea": tm.crew.ID, "path": "/fs/r", "content": "x"}); !slices.Contains([]string{"access.denied", "access.verb_ceiling"}, code) {
		t.Fatalf("a reader writes a page: %s", code)
	}
	// A malformed page URI is invalid params; a missing page is not found.
	_, err = b.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "oml://kb/" + tm.crew.ID + "/nothing-here.md"})
	if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("a missing page: %v", err)
	}
}

type brainListOut struct {
	Entries []struct {
		Path    string `json:"path"`
		Version string `json:"version"`
	} `json:"entries"`
	NextCursor *string `json:"next_cursor"`
}

// Resources page 100 at a time with the last URI as the cursor; every
// page listed is readable at its URI.
func TestKnowledgeResourcesPaging(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	const n = 104
	for i := range n {
		q := url.Values{"workarea": {tm.crew.ID}, "path": {fmt.Sprintf("/fs/p/%03d #?.md", i)}}
		p := decode[kbPage](t, s.do(t, "PUT", "/v1/kb?"+q.Encode(), tm.writer.Token, fmt.Sprintf("page %d", i)), 202)
		decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, p.ArtifactID), 200)
	}
	cs := s.mcpSession(t, tm.reader.Token, "2026-07-28")
	var all []*mcp.Resource
	cursor := ""
	for pages := 0; ; pages++ {
		list, err := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil || pages > 3 {
			t.Fatalf("page %d: %v", pages, err)
		}
		all = append(all, list.Resources...)
		if list.NextCursor == "" {
			break
		}
		if len(list.Resources) != 100 || list.NextCursor != list.Resources[99].URI {
			t.Fatalf("page %d: %d resources, cursor %q", pages, len(list.Resources), list.NextCursor)
		}
		cursor = list.NextCursor
	}
	if len(all) != 3+n {
		t.Fatalf("%d resources", len(all))
	}
	for i, r := range all[3:] {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: r.URI})
		if err != nil || res.Contents[0].Text != fmt.Sprintf("page %d", i) {
			t.Fatalf("%s: %+v %v", r.URI, res, err)
		}
	}
	if !strings.Contains(all[3].URI, "/p/000%20%23%3F.md") {
		t.Fatalf("percent-encoding: %s", all[3].URI)
	}
}

// The CLI reaches the knowledge base like the tools: put from standard
// input, get, list and history, each with --json; delete over HTTP.
func TestKnowledgeCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	cmd := exec.Command(bins.cli, "--json", "kb", "put", "/fs/runbook.md", "--workarea", tm.crew.ID, "--if-version", "absent")
	cmd.Env = s.cliEnv(tm.writer.Token)
	cmd.Stdin = strings.NewReader("# Runbook\n\nRestart the smelter feed first.\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kb put: %v %s", err, out)
	}
	var put kbPage
	if err := jsonUnmarshal(string(out), &put); err != nil || put.State != "held" {
		t.Fatalf("kb put: %s", out)
	}
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, put.ArtifactID), 200)
	var got kbPage
	if err := jsonUnmarshal(s.mustOML(t, tm.reader.Token, "--json", "kb", "get", "/fs/runbook.md", "--workarea", "universe.procurement.metals-crew"), &got); err != nil ||
		got.Content != "# Runbook\n\nRestart the smelter feed first.\n" || got.State != "promoted" {
		t.Fatalf("kb get: %+v %v", got, err)
	}
	if human := s.mustOML(t, tm.reader.Token, "kb", "list", "--workarea", tm.crew.ID); !strings.Contains(human, "/fs/runbook.md") {
		t.Fatalf("kb list: %s", human)
	}
	if human := s.mustOML(t, tm.reader.Token, "kb", "history", "/fs/runbook.md", "--workarea", tm.crew.ID); !strings.Contains(human, put.Version) {
		t.Fatalf("kb history: %s", human)
	}
	var del kbPage
	if err := jsonUnmarshal(s.mustOML(t, tm.author2.Token, "--json", "kb", "delete", "/fs/runbook.md", "--workarea", tm.crew.ID, "--if-version", put.Version), &del); err != nil || !del.Deleted {
		t.Fatalf("kb delete: %+v %v", del, err)
	}
	if _, errOut, err := s.oml(t, tm.reader.Token, "kb", "put", "/fs/x", "--workarea", tm.crew.ID, "--file", "/nonexistent"); err == nil || !strings.Contains(errOut, "nonexistent") {
		t.Fatalf("a missing file: %v %s", err, errOut)
	}
}

// session_brief lists the workarea's pages past their stale_after, the
// longest overdue first; a newer version without one replaces it.
func TestKnowledgeStalePages(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	a := s.mcpSession(t, tm.writer.Token, "2026-07-28")
	put := func(path, content, stale string) kbPage {
		args := map[string]any{"store": "project", "workarea": tm.crew.ID, "path": path, "content": content}
		if stale != "" {
			args["stale_after"] = stale
		}
		p := toolJSON[kbPage](t, a, "brain_put", args)
		decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, p.ArtifactID), 200)
		return p
	}
	put("/fs/old.md", "Old prices.", "2020-01-01T00:00:00Z")
	put("/fs/older.md", "Older prices.", "2019-01-01T00:00:00Z")
	put("/fs/fresh.md", "Fresh prices.", "2999-01-01T00:00:00Z")
	put("/fs/plain.md", "No date.", "")
	type brief struct {
		StalePages struct {
			Items []struct {
				Path       string `json:"path"`
				StaleAfter string `json:"stale_after"`
			} `json:"items"`
		} `json:"stale_pages"`
	}
	b := toolJSON[brief](t, a, "session_brief", map[string]any{"workarea": tm.crew.ID})
	if len(b.StalePages.Items) != 2 || b.StalePages.Items[0].Path != "/fs/older.md" || b.StalePages.Items[1].Path != "/fs/old.md" {
		t.Fatalf("stale pages: %+v", b.StalePages)
	}
	put("/fs/older.md", "Older prices, checked.", "")
	b = toolJSON[brief](t, s.mcpSession(t, tm.reader.Token, "2026-07-28"), "session_brief", map[string]any{"workarea": tm.crew.ID})
	if len(b.StalePages.Items) != 1 || b.StalePages.Items[0].Path != "/fs/old.md" {
		t.Fatalf("stale pages after a new version: %+v", b.StalePages)
	}
}
