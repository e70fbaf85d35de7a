package e2e

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// webClient is a plain HTTP client holding one page session's cookie,
// for requests a browser would not send.
type webClient struct {
	base    string
	session string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func noRedirect() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// webSignIn signs in with key through the sign-in form, as a browser does.
func webSignIn(t *testing.T, s *server, key string) webClient {
	t.Helper()
	resp, err := http.Get(s.URL + "/sign-in")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfField.FindSubmatch(body)
	var pre *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "oml_signin" {
			pre = c
		}
	}
	if m == nil || pre == nil {
		t.Fatalf("sign-in page without its token: %s", body)
	}
	req, _ := http.NewRequest("POST", s.URL+"/sign-in", strings.NewReader(url.Values{"csrf": {string(m[1])}, "key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.URL)
	req.AddCookie(pre)
	resp, err = noRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "oml_session" {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
				t.Fatalf("session cookie flags: %+v", c)
			}
			return webClient{base: s.URL, session: c.Value}
		}
	}
	t.Fatalf("sign-in answered %d without a session cookie", resp.StatusCode)
	return webClient{}
}

// get fetches a page with the session.
func (c webClient) get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", c.base+path, nil)
	req.AddCookie(&http.Cookie{Name: "oml_session", Value: c.session})
	resp, err := noRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// csrf reads the session's CSRF token from a page.
func (c webClient) csrf(t *testing.T) string {
	t.Helper()
	_, body := c.get(t, "/queue")
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the queue page: %s", body)
	}
	return m[1]
}

// post sends a form with the session; headers are name, value pairs
// (Origin defaults to the server's own).
func (c webClient) post(t *testing.T, path string, form url.Values, headers ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.base)
	req.AddCookie(&http.Cookie{Name: "oml_session", Value: c.session})
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := noRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// postFollow posts like post and, as a browser does, follows a 303 with
// a GET.
func (c webClient) postFollow(t *testing.T, path string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.base)
	req.AddCookie(&http.Cookie{Name: "oml_session", Value: c.session})
	resp, err := noRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 303 {
		return resp.StatusCode, string(body)
	}
	got, page := c.get(t, resp.Header.Get("Location"))
	return got.StatusCode, page
}

// The pages refuse, and change nothing, when a form comes without this
// session's CSRF token or from another site, when a verdict names another
// reviewer's serve, when an author would be served its own item, and
// when the session is signed out or its key revoked. Sign-in, sign-out
// and one-time codes are journalled; every page carries the security
// headers.
func TestWebRefusals(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	writer := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	item := toolJSON[remembered](t, writer, "oml_remember", map[string]any{
		"workarea": tm.crew.ID, "claim_key": "accra", "text": "Accra Metals quoted 412 USD/t."})
	serves := func() int64 { return s.count(t, `SELECT count(*) FROM admission.serves`) }

	// Security headers on every page, signed in or not.
	rev := webSignIn(t, s, tm.reviewer.Token)
	for _, path := range []string{"/", "/sign-in", "/queue", "/inbox", "/overview", "/static/app.css"} {
		resp, _ := rev.get(t, path)
		h := resp.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: security headers %v", path, h)
		}
	}
	token := rev.csrf(t)

	// No CSRF token, a wrong one, another site: refused, nothing served.
	for name, c := range map[string]struct {
		form    url.Values
		headers []string
		code    string
	}{
		"no token":       {url.Values{}, nil, "access.denied"},
		"a wrong token":  {url.Values{"csrf": {token + "x"}}, nil, "access.denied"},
		"foreign Origin": {url.Values{"csrf": {token}}, []string{"Origin", "http://evil.example"}, "access.denied"},
		"cross-site":     {url.Values{"csrf": {token}}, []string{"Sec-Fetch-Site", "cross-site"}, "access.denied"},
		"same-site":      {url.Values{"csrf": {token}}, []string{"Sec-Fetch-Site", "same-site"}, "access.denied"},
	} {
		status, body := rev.post(t, "/review/serve", c.form, c.headers...)
		if status != 403 || !strings.Contains(body, c.code) {
			t.Errorf("%s: %d %s", name, status, body)
		}
	}
	if n := serves(); n != 0 {
		t.Fatalf("refused forms served %d items", n)
	}

	// Another reviewer's serve: served through the API to writer-2, the
	// page's verdict on it is a missing serve, and the serve stays open.
	other := decode[served](t, s.do(t, "POST", "/v1/reviews/serve", tm.author2.Token, nil), 200)
	status, body := rev.post(t, "/review/"+other.ServeID+"/verdict", url.Values{"csrf": {token}, "verdict": {"approve"}})
	if status != 404 || !strings.Contains(body, "access.not_found") {
		t.Fatalf("a verdict on another reviewer's serve: %d %s", status, body)
	}
	if n := s.count(t, `SELECT count(*) FROM admission.serves WHERE id = $1 AND consumed_at IS NULL`, other.ServeID); n != 1 {
		t.Fatal("another reviewer's serve was consumed")
	}
	if status, body := rev.post(t, "/review/"+other.ServeID+"/release", url.Values{"csrf": {token}}); status != 404 {
		t.Fatalf("a release of another reviewer's serve: %d %s", status, body)
	}

	// The author is never served its own item: the page says nothing waits.
	s.sql(t, `UPDATE admission.serves SET expires_at = now() - interval '1 second'`)
	s.sql(t, `UPDATE admission.artifacts SET leased_until = NULL WHERE id = $1`, item.ArtifactID)
	author := webSignIn(t, s, tm.writer.Token)
	before := serves()
	status, body = author.post(t, "/review/serve", url.Values{"csrf": {author.csrf(t)}})
	if status != 200 || !strings.Contains(body, "Nothing to review") || serves() != before {
		t.Fatalf("the author's serve: %d %s", status, body)
	}

	// Sign-out ends the session on the server: its cookie is refused.
	status, _ = author.post(t, "/sign-out", url.Values{"csrf": {author.csrf(t)}})
	if status != 303 {
		t.Fatalf("sign-out: %d", status)
	}
	status, body = author.post(t, "/review/serve", url.Values{"csrf": {token}})
	if status != 401 || !strings.Contains(body, "auth.invalid_key") {
		t.Fatalf("a signed-out session's post: %d %s", status, body)
	}
	if resp, _ := author.get(t, "/queue"); resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/sign-in") {
		t.Fatalf("a signed-out session's page: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}

	// A revoked key ends its web sessions.
	k := s.issueKey(t, "reviewer-2", "dreamer")
	s.grant(t, k.KeyID, "universe.procurement", "reader", "allow")
	s.grant(t, k.KeyID, "universe.procurement", "dreamer.review", "allow")
	r2 := webSignIn(t, s, k.Token)
	t2 := r2.csrf(t)
	s.mustOML(t, s.AdminKey, "key", "revoke", k.KeyID)
	before = serves()
	if status, body := r2.post(t, "/review/serve", url.Values{"csrf": {t2}}); status != 401 || !strings.Contains(body, "auth.invalid_key") || serves() != before {
		t.Fatalf("a revoked key's session: %d %s", status, body)
	}
	if n := s.count(t, `SELECT count(*) FROM access.web_credentials WHERE key_id = $1 AND ended_at IS NULL`, k.KeyID); n != 0 {
		t.Fatalf("%d live web sessions of a revoked key", n)
	}

	// A one-time sign-in code: once, never the key in the link.
	code := decode[struct {
		Code string `json:"code"`
		Path string `json:"path"`
	}](t, s.do(t, "POST", "/v1/web/sign-in-codes", tm.reviewer.Token, map[string]any{}), 201)
	if strings.Contains(code.Path, tm.reviewer.Token) || !strings.HasPrefix(code.Code, "oml_c_") {
		t.Fatalf("sign-in code %+v", code)
	}
	// Opening the link spends nothing and names the key; the confirmation
	// (a same-origin form with its token) signs in, once.
	confirm := func() (*http.Response, string) {
		t.Helper()
		resp, err := noRedirect().Get(s.URL + code.Path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	var page string
	for range 2 {
		resp, body := confirm()
		for _, c := range resp.Cookies() {
			if c.Name == "oml_session" {
				t.Fatal("opening the link signed in")
			}
		}
		if resp.StatusCode != 200 || !strings.Contains(body, "Sign in as reviewer-1") {
			t.Fatalf("the code's link: %d %s", resp.StatusCode, body)
		}
		page = body
	}
	resp, _ := confirm()
	var pre *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "oml_signin" {
			pre = c
		}
	}
	if m := csrfField.FindStringSubmatch(page); m == nil {
		t.Fatalf("the confirmation page has no token: %s", page)
	}
	post := func(csrf string, origin string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", s.URL+"/sign-in/code", strings.NewReader(url.Values{"csrf": {csrf}, "code": {code.Code}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		req.AddCookie(pre)
		resp, err := noRedirect().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := post(pre.Value+"x", s.URL); r.StatusCode != 403 {
		t.Fatalf("a confirmation without its token: %d", r.StatusCode)
	}
	if r := post(pre.Value, "http://evil.example"); r.StatusCode != 403 {
		t.Fatalf("a confirmation from another site: %d", r.StatusCode)
	}
	if r := post(pre.Value, s.URL); r.StatusCode != 303 || len(r.Cookies()) == 0 || r.Cookies()[0].Name != "oml_session" {
		t.Fatalf("the confirmation: %d %v", r.StatusCode, r.Cookies())
	}
	if r := post(pre.Value, s.URL); r.StatusCode != 401 {
		t.Fatalf("the code's second use: %d", r.StatusCode)
	}

	// Sign-in, sign-out and codes are journalled, and no secret is.
	for typ, want := range map[string]int64{"web.sign_in": 4, "web.sign_out": 1, "web.code_issue": 1} {
		if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE tenant_id = $1 AND event_type = $2`, s.TenantID, typ); n != want {
			t.Errorf("%s events: %d, want %d", typ, n, want)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE payload::text LIKE '%oml_w_%' OR payload::text LIKE '%oml_c_%' OR subject::text LIKE '%oml_w_%'`); n != 0 {
		t.Fatal("a web credential is in the journal")
	}
}

// A pending edge is served on the page with both endpoints named as the
// reviewer may see them, and its verdict ratifies it; skipping it passes
// it over.
func TestWebServesAnEdge(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	s.grant(t, tm.writer.KeyID, "universe.procurement", "dreamer.propose", "allow")
	a := s.createWorkarea(t, "universe.procurement", "edge-a", "--status", "committed")
	b := s.createWorkarea(t, "universe.procurement", "edge-b", "--status", "committed")
	e := decode[struct {
		EdgeID string `json:"edge_id"`
	}](t, s.do(t, "POST", "/v1/edges", tm.writer.Token, map[string]any{"kind": "workarea", "label": "relates_to", "from": a.ID, "to": b.ID, "note": "same supplier"}), 201)

	rev := webSignIn(t, s, tm.reviewer.Token)
	token := rev.csrf(t)
	status, body := rev.postFollow(t, "/review/serve", url.Values{"csrf": {token}})
	if status != 200 || !strings.Contains(body, e.EdgeID) || !strings.Contains(body, "universe.procurement.edge-a") ||
		!strings.Contains(body, "universe.procurement.edge-b") || !strings.Contains(body, "same supplier") {
		t.Fatalf("served edge page: %d %s", status, body)
	}
	serve := regexp.MustCompile(`action="/review/(srv_[0-9A-Z]+)/release"`).FindStringSubmatch(body)
	if serve == nil {
		t.Fatalf("no release form: %s", body)
	}
	// Skip it: released, and with nothing else waiting the page says so.
	status, body = rev.postFollow(t, "/review/"+serve[1]+"/release", url.Values{"csrf": {token}, "next": {"1"}, "skip": {e.EdgeID}})
	if status != 200 || !strings.Contains(body, "Nothing to review") {
		t.Fatalf("skip the only edge: %d %s", status, body)
	}
	status, body = rev.postFollow(t, "/review/serve", url.Values{"csrf": {token}})
	serve = regexp.MustCompile(`action="/review/(srv_[0-9A-Z]+)/verdict"`).FindStringSubmatch(body)
	if status != 200 || serve == nil {
		t.Fatalf("serve again: %d %s", status, body)
	}
	// A reload shows the same serve and serves nothing new; the serve is
	// its reviewer's alone.
	serves := s.count(t, `SELECT count(*) FROM admission.serves`)
	if resp, again := rev.get(t, "/review/"+serve[1]); resp.StatusCode != 200 || !strings.Contains(again, serve[1]) || !strings.Contains(again, e.EdgeID) {
		t.Fatalf("reload: %d %s", resp.StatusCode, again)
	}
	if n := s.count(t, `SELECT count(*) FROM admission.serves`); n != serves {
		t.Fatal("a reload served another item")
	}
	if r := s.do(t, "GET", "/v1/reviews/"+serve[1], tm.author2.Token, nil); r.Status != 404 || r.code() != "access.not_found" {
		t.Fatalf("another key reads the serve: %d %s", r.Status, r.Body)
	}
	status, body = rev.post(t, "/review/"+serve[1]+"/verdict", url.Values{"csrf": {token}, "verdict": {"approve"}})
	if status != 200 || !strings.Contains(body, `<strong id="state">ratified</strong>`) || !strings.Contains(body, e.EdgeID) {
		t.Fatalf("edge verdict page: %d %s", status, body)
	}
	if r := s.do(t, "GET", "/v1/reviews/"+serve[1], tm.reviewer.Token, nil); r.Status != 409 || r.code() != "review.serve_consumed" {
		t.Fatalf("a judged serve read again: %d %s", r.Status, r.Body)
	}

	// The tail names who ratified only to an admin of the workarea.
	type tail struct {
		Events []struct {
			EventType string `json:"event_type"`
			Actor     string `json:"actor"`
			Hash      string `json:"hash"`
		} `json:"events"`
	}
	actorOf := func(key string) (string, string) {
		got := decode[tail](t, s.do(t, "GET", "/v1/events?scope=universe.procurement&after_seq=0&limit=500", key, nil), 200)
		for _, ev := range got.Events {
			if ev.EventType == "workarea.relate_ratified" {
				return ev.Actor, ev.Hash
			}
		}
		t.Fatalf("no ratification in the tail: %+v", got)
		return "", ""
	}
	if actor, hash := actorOf(tm.reader.Token); actor != "" || len(hash) != 64 {
		t.Fatalf("a reader sees the ratifier %q (hash %q)", actor, hash)
	}
	if actor, _ := actorOf(s.AdminKey); actor != tm.reviewer.KeyID {
		t.Fatalf("an admin sees actor %q, want %s", actor, tm.reviewer.KeyID)
	}
}
