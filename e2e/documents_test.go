package e2e

import (
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type document struct {
	ArtifactID    string  `json:"artifact_id"`
	Title         string  `json:"title"`
	Content       *string `json:"content"`
	Version       string  `json:"version"`
	Revision      int     `json:"revision"`
	State         string  `json:"state"`
	ReviewID      string  `json:"review_id"`
	Actor         string  `json:"actor"`
	ViewerURL     string  `json:"viewer_url"`
	DraftURL      string  `json:"draft_url"`
	CommentsCount int     `json:"comments_count"`
	CommentsOpen  int     `json:"comments_open"`
}

type comment struct {
	CommentID   string `json:"comment_id"`
	Actor       string `json:"actor"`
	Quote       string `json:"quote"`
	Offset      *int   `json:"offset"`
	Resolved    bool   `json:"resolved"`
	DeleteToken string `json:"delete_token"`
}

// Documents (issue 15, seed 002's artifacts) over the real binaries:
// publish → held → approved → readable by others and at its public or
// password URL; a base_version conflict at submission and at promotion;
// comments with anchors, delete tokens, resolve and reopen, counts; no
// delete verb over MCP (R1).
func TestDocuments(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	a := s.mcpSession(t, tm.writer.Token, "2026-07-28")
	b := s.mcpSession(t, tm.author2.Token, "2026-07-28")
	rd := s.mcpSession(t, tm.reader.Token, "2026-07-28")
	get := func(cs *mcp.ClientSession, id string) (document, string) {
		t.Helper()
		sc, isErr := callTool(t, cs, "artifact_get", map[string]any{"artifact_id": id})
		if isErr {
			code, _ := toolError(t, cs, "artifact_get", map[string]any{"artifact_id": id})
			return document{}, code
		}
		var d document
		if err := jsonUnmarshal(string(sc), &d); err != nil {
			t.Fatal(err)
		}
		return d, ""
	}
	anon := func(u string, form url.Values) reply {
		t.Helper()
		var body any
		method := "GET"
		if form != nil {
			method, body = "POST", form.Encode()
		}
		return s.do(t, method, strings.TrimPrefix(u, s.URL), "", body, "Content-Type", "application/x-www-form-urlencoded")
	}

	md := toolJSON[document](t, a, "artifact_publish", map[string]any{"workarea": tm.crew.ID, "format": "markdown",
		"content": "# Copper plan\n\nBuy from **Accra Metals** first, then Lagos.\n\n<script>alert(1)</script>\n", "visibility": "public",
		"actor": "ignored"})
	if md.State != "held" || md.Title != "Copper plan" || md.Revision != 0 || md.ViewerURL != "" {
		t.Fatalf("publish: %+v", md)
	}
	if _, code := get(b, md.ArtifactID); code != "access.not_found" {
		t.Fatalf("another agent reads a held document: %s", code)
	}
	if own, _ := get(a, md.ArtifactID); own.State != "held" || own.Content == nil {
		t.Fatalf("the author's read: %+v", own)
	}
	viewer := s.URL + "/d/" + md.ArtifactID
	if r := anon(viewer, nil); r.Status != 404 {
		t.Fatalf("the public URL of a held document: %d", r.Status)
	}
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, md.ReviewID), 200)

	got, code := get(b, md.ArtifactID)
	if code != "" || got.State != "promoted" || got.Actor == "" || got.ViewerURL != viewer || !strings.Contains(*got.Content, "Accra Metals") {
		t.Fatalf("after approval: %+v %s", got, code)
	}
	list := toolJSON[struct {
		Artifacts []document `json:"artifacts"`
	}](t, rd, "artifact_list", map[string]any{"workarea": tm.crew.ID})
	if len(list.Artifacts) != 1 || list.Artifacts[0].ArtifactID != md.ArtifactID {
		t.Fatalf("list: %+v", list)
	}
	r := anon(viewer, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), "<strong>Accra Metals</strong>") || strings.Contains(string(r.Body), "<script>") ||
		!strings.HasPrefix(r.Header.Get("Content-Security-Policy"), "sandbox;") {
		t.Fatalf("the public URL: %d %s %q", r.Status, r.Body, r.Header.Get("Content-Security-Policy"))
	}

	// A password-protected HTML document.
	pw := toolJSON[document](t, a, "artifact_publish", map[string]any{"workarea": tm.crew.ID, "format": "html", "title": "Prices",
		"content": "<h1>Prices</h1><p>412 USD/t</p>", "visibility": "password", "password": "correct horse"})
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, pw.ReviewID), 200)
	pwURL := s.URL + "/d/" + pw.ArtifactID
	if r := anon(pwURL, nil); r.Status != 401 || !strings.Contains(string(r.Body), "password protected") {
		t.Fatalf("without the password: %d", r.Status)
	}
	if r := anon(pwURL, url.Values{"password": {"wrong horse"}}); r.Status != 401 || strings.Contains(string(r.Body), "412 USD") {
		t.Fatalf("a wrong password: %d", r.Status)
	}
	if r := anon(pwURL, url.Values{"password": {"correct horse"}}); r.Status != 200 || !strings.Contains(string(r.Body), "412 USD/t") {
		t.Fatalf("the password: %d %s", r.Status, r.Body)
	}
	// Wrong passwords are throttled: five a minute, then 429 even for the
	// right one.
	for range 4 {
		if r := anon(pwURL, url.Values{"password": {"wrong horse"}}); r.Status != 401 {
			t.Fatalf("a wrong password: %d", r.Status)
		}
	}
	if r := anon(pwURL, url.Values{"password": {"correct horse"}}); r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("after five wrong passwords: %d %q", r.Status, r.Header.Get("Retry-After"))
	}
	// A workarea document is for signed-in readers only.
	wa := toolJSON[document](t, a, "artifact_publish", map[string]any{"workarea": tm.crew.ID, "format": "html", "title": "Internal",
		"content": "<p>internal</p>"})
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, wa.ReviewID), 200)
	if r := anon(s.URL+"/d/"+wa.ArtifactID, nil); r.Status != 404 {
		t.Fatalf("a workarea document without a session: %d", r.Status)
	}

	// base_version: stale at submission, and at promotion.
	v2 := toolJSON[document](t, a, "artifact_update", map[string]any{"artifact_id": md.ArtifactID, "content": "# Copper plan\n\nAccra, then Tema.", "base_version": md.Version})
	v3 := toolJSON[document](t, b, "artifact_update", map[string]any{"artifact_id": md.ArtifactID, "content": "# Copper plan\n\nLagos only.", "base_version": md.Version})
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, v2.ReviewID), 200)
	srv, ok := s.serve(t, tm.reviewer.Token)
	if !ok || srv.Item.ArtifactID != v3.ReviewID {
		t.Fatalf("serve v3: %+v", srv)
	}
	if r := s.verdict(t, tm.reviewer.Token, srv.ServeID, "approve"); r.Status != 409 || !strings.Contains(string(r.Body), "current_version="+v2.Version) {
		t.Fatalf("approving a stale version: %d %s", r.Status, r.Body)
	}
	decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, srv.ServeID, "reject"), 200)
	if code, body := toolError(t, b, "artifact_update", map[string]any{"artifact_id": md.ArtifactID, "content": "x", "base_version": md.Version}); code != "knowledge.conflict" || !strings.Contains(string(body), v2.Version) {
		t.Fatalf("a stale base at submission: %s %s", code, body)
	}
	if forced := toolJSON[document](t, b, "artifact_update", map[string]any{"artifact_id": md.ArtifactID, "content": "# Forced", "base_version": md.Version, "force": true}); forced.State != "held" {
		t.Fatalf("force: %+v", forced)
	}
	vs := toolJSON[struct {
		Versions []struct {
			Revision int `json:"revision"`
		} `json:"versions"`
	}](t, rd, "artifact_versions", map[string]any{"artifact_id": md.ArtifactID})
	if len(vs.Versions) != 2 || vs.Versions[0].Revision != 2 {
		t.Fatalf("versions: %+v", vs)
	}

	// Comments: anchors, the delete token, resolve and reopen, counts.
	c1 := toolJSON[comment](t, b, "comment_post", map[string]any{"artifact_id": md.ArtifactID, "body": "Why Tema?" + strings.Repeat(" ", 5000), "quote": "then Tema"})
	c2 := toolJSON[comment](t, a, "comment_post", map[string]any{"artifact_id": md.ArtifactID, "body": "See the price list.", "offset": 3, "revision": 1})
	if c1.DeleteToken == "" || c1.Quote != "then Tema" || c2.Offset == nil || *c2.Offset != 3 || c1.Actor == c2.Actor {
		t.Fatalf("comments: %+v %+v", c1, c2)
	}
	for name, args := range map[string]map[string]any{
		"a quote the version lacks": {"artifact_id": md.ArtifactID, "body": "x", "quote": "not in it"},
		"point and quote":           {"artifact_id": md.ArtifactID, "body": "x", "quote": "Tema", "offset": 1},
		"an offset past the end":    {"artifact_id": md.ArtifactID, "body": "x", "offset": 100000},
		"an empty body":             {"artifact_id": md.ArtifactID, "body": " "},
	} {
		if code, _ := toolError(t, b, "comment_post", args); code != "request.validation" {
			t.Errorf("%s: %s", name, code)
		}
	}
	if code, _ := toolError(t, rd, "comment_post", map[string]any{"artifact_id": md.ArtifactID, "body": "x"}); code != "access.denied" {
		t.Fatalf("a reader comments: %s", code)
	}
	if d, _ := get(rd, md.ArtifactID); d.CommentsCount != 2 || d.CommentsOpen != 2 {
		t.Fatalf("counts: %+v", d)
	}
	if code, _ := toolError(t, rd, "comment_resolve", map[string]any{"comment_id": c1.CommentID}); code != "access.denied" {
		t.Fatalf("a reader resolves without the token: %s", code)
	}
	if res := toolJSON[comment](t, rd, "comment_resolve", map[string]any{"comment_id": c1.CommentID, "delete_token": c1.DeleteToken}); !res.Resolved {
		t.Fatalf("resolve with the token: %+v", res)
	}
	if d, _ := get(rd, md.ArtifactID); d.CommentsCount != 2 || d.CommentsOpen != 1 {
		t.Fatalf("counts after resolving: %+v", d)
	}
	if res := toolJSON[comment](t, a, "comment_resolve", map[string]any{"comment_id": c1.CommentID, "resolved": false}); res.Resolved {
		t.Fatalf("reopen: %+v", res)
	}
	if r := s.do(t, "DELETE", "/v1/comments/"+c2.CommentID, tm.reader.Token, nil, "X-Delete-Token", "oml_ct_wrong"); r.Status != 403 {
		t.Fatalf("delete with a wrong token: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "DELETE", "/v1/comments/"+c2.CommentID, tm.reader.Token, nil, "X-Delete-Token", c2.DeleteToken); r.Status != 200 {
		t.Fatalf("delete with the token: %d %s", r.Status, r.Body)
	}
	cl := toolJSON[struct {
		Comments      []comment `json:"comments"`
		CommentsCount int       `json:"comments_count"`
		CommentsOpen  int       `json:"comments_open"`
	}](t, rd, "comment_list", map[string]any{"artifact_id": md.ArtifactID})
	if len(cl.Comments) != 1 || cl.CommentsCount != 1 || cl.CommentsOpen != 1 || cl.Comments[0].DeleteToken != "" {
		t.Fatalf("comment_list: %+v", cl)
	}
	for _, tool := range []string{"artifact_delete", "comment_delete"} {
		if _, err := a.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "(R1)") {
			t.Fatalf("%s over MCP: %v", tool, err)
		}
	}
	// Another tenant's key: the document is missing, to reads and the viewer alike.
	other := s.bootstrapTenant(t, "globex")
	if r := s.do(t, "GET", "/v1/documents/"+md.ArtifactID, other, nil); r.Status != 404 {
		t.Fatalf("another tenant reads it: %d", r.Status)
	}
	if r := s.do(t, "GET", "/v1/documents?workarea="+tm.crew.ID, tm.author2.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("GET /v1/documents: %d %s", r.Status, r.Body)
	}
}

// The HTML of a document runs in a sandbox: with an OML session in the
// browser, the page can neither read the cookie nor call the API, and its
// scripts do not run; a draft URL opens for its author alone.
func TestDocumentSandbox(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	a := s.mcpSession(t, tm.writer.Token, "2026-07-28")
	page := `<!doctype html><html><body><p id="out">untouched</p><script>
document.getElementById('out').textContent = 'ran cookie=' + document.cookie;
fetch('/v1/whoami').then(r => r.text()).then(t => { document.getElementById('out').textContent += ' api=' + t; });
</script></body></html>`
	doc := toolJSON[document](t, a, "artifact_publish", map[string]any{"workarea": tm.crew.ID, "format": "html", "title": "Probe",
		"content": page, "visibility": "public"})
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, doc.ReviewID), 200)
	draft := toolJSON[document](t, a, "artifact_draft", map[string]any{"artifact_id": doc.ArtifactID, "content": "<p id=\"out\">my draft</p>"})
	if draft.DraftURL != s.URL+"/d/"+doc.ArtifactID+"/draft" {
		t.Fatalf("draft: %+v", draft)
	}

	br := newBrowser(t)
	br.open(t, s.URL+"/")
	signIn(t, br, tm.writer.Token)
	br.do(t, chromedp.Navigate(s.URL+"/d/"+doc.ArtifactID), chromedp.WaitReady(chromedp.CSS("#out")))
	if got := br.text(t, "#out"); got != "untouched" {
		t.Fatalf("the document's script ran: %q", got)
	}
	probe := `(() => { let c; try { c = document.cookie } catch (e) { c = 'blocked:' + e.name } return self.origin + ' ' + c })()`
	if got := evalJS[string](t, br, probe); got != "null blocked:SecurityError" {
		t.Fatalf("from inside the document: %q", got)
	}
	br.do(t, chromedp.Navigate(draft.DraftURL), chromedp.WaitReady(chromedp.CSS("#out")))
	if got := br.text(t, "#out"); got != "my draft" {
		t.Fatalf("the author's draft: %q", got)
	}
	other := newBrowser(t)
	other.open(t, s.URL+"/")
	signIn(t, other, tm.author2.Token)
	other.do(t, chromedp.Navigate(draft.DraftURL), chromedp.WaitReady(chromedp.CSS("main")))
	if got := other.text(t, "main"); !strings.Contains(got, "access.not_found") {
		t.Fatalf("another principal opens the draft: %q", got)
	}
	// Without a session the draft URL sends the browser to sign in.
	if r := s.do(t, "GET", "/d/"+doc.ArtifactID+"/draft", "", nil); r.Status != 200 || !strings.Contains(string(r.Body), "Sign in") || strings.Contains(string(r.Body), "my draft") {
		t.Fatalf("the draft without a session: %d %.300s", r.Status, r.Body)
	}
}

// oml docs publish|get|list, each with --json.
func TestDocumentsCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	cmd := exec.Command(bins.cli, "--json", "docs", "publish", "--workarea", tm.crew.ID, "--format", "markdown", "--visibility", "public")
	cmd.Env = s.cliEnv(tm.writer.Token)
	cmd.Stdin = strings.NewReader("# Runbook\n\nRestart the feed.\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docs publish: %v %s", err, out)
	}
	var d document
	if err := jsonUnmarshal(string(out), &d); err != nil || d.State != "held" || d.Title != "Runbook" {
		t.Fatalf("docs publish: %s", out)
	}
	decode[map[string]any](t, s.approveNext(t, tm.reviewer.Token, d.ReviewID), 200)
	var got document
	if err := jsonUnmarshal(s.mustOML(t, tm.reader.Token, "--json", "docs", "get", d.ArtifactID), &got); err != nil || got.Content == nil || !strings.Contains(*got.Content, "Restart") {
		t.Fatalf("docs get: %+v %v", got, err)
	}
	if human := s.mustOML(t, tm.reader.Token, "docs", "list", "--workarea", tm.crew.ID); !strings.Contains(human, d.ArtifactID) || !strings.Contains(human, "Runbook") {
		t.Fatalf("docs list: %s", human)
	}
}
