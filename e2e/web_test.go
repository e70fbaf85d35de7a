package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The reviewer's and the human's pages in a real browser (headless
// Chromium): sign in with a key, read the queue, serve, approve with the
// keyboard and see an agent recall the claim; skip, then reject with a
// reason and see the author's oml_my_work say rejected; let a serve
// expire and read the refusal in words; as the human, see a question
// arrive without a reload, answer it and wake the agent's inbox_wait,
// decide an approval; walk the overview to a workarea and verify the
// chain. Every page passes axe-core with no serious or critical
// violation and writes nothing to the console.
func TestWebReviewAndInbox(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	writer := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	first := toolJSON[remembered](t, writer, "oml_remember", map[string]any{
		"workarea": tm.crew.ID, "claim_key": "accra-price", "text": "Accra Metals quoted 412 USD/t for copper cathodes."})
	second := toolJSON[remembered](t, writer, "oml_remember", map[string]any{
		"workarea": tm.crew.ID, "claim_key": "tema-price", "text": "Tema Steel quotes are always the cheapest.", "derives_from": []string{}})
	third := toolJSON[remembered](t, writer, "oml_remember", map[string]any{
		"workarea": tm.crew.ID, "claim_key": "lead-time", "text": "Lead time from Accra is six weeks."})

	b := newBrowser(t)
	b.open(t, s.URL+"/")
	if got := b.text(t, "h1"); got != "Sign in" {
		t.Fatalf("GET / without a session shows %q", got)
	}
	b.checkPage(t, "signin")

	// A wrong key is refused in words, and no session starts.
	b.do(t, chromedp.SendKeys(chromedp.CSS("#key"), "oml_k_not-a-key"))
	b.navigate(t, chromedp.Submit(chromedp.CSS("#key")))
	if got := b.text(t, ".refusal"); !strings.Contains(got, "auth.invalid_key") {
		t.Fatalf("a wrong key: %q", got)
	}
	b.refused(401)
	signIn(t, b, tm.reviewer.Token)
	if p := b.path(t); p != "/queue" {
		t.Fatalf("signed in, at %s", p)
	}
	if got := b.text(t, "main"); !strings.Contains(got, "3 claims and 0 edges") {
		t.Fatalf("queue page: %q", got)
	}
	b.checkPage(t, "queue")
	// The overview shows the reviewer what waits where.
	b.open(t, s.URL+"/overview")
	if got := b.text(t, "table.tree"); !strings.Contains(got, "procurement\tdevelopment\t0\t0") || !strings.Contains(got, "metals-crew\tcommitted\t3\t0") || strings.Contains(got, "universe") {
		t.Fatalf("the reviewer's overview: %q", got)
	}
	b.checkPage(t, "overview")
	b.open(t, s.URL+"/queue")

	// Serve (n) and approve (a) with the keyboard.
	b.pressTo(t, "n")
	b.do(t, chromedp.WaitReady(chromedp.CSS("#approve")))
	if got := b.text(t, "blockquote.text"); got != "Accra Metals quoted 412 USD/t for copper cathodes." {
		t.Fatalf("served text %q", got)
	}
	if got := b.text(t, "main"); !strings.Contains(got, "0 of 1 approvals given") || !strings.Contains(got, "universe.procurement.metals-crew") {
		t.Fatalf("served page lacks policy or path: %q", got)
	}
	b.do(t, chromedp.WaitReady(chromedp.CSS("#countdown")))
	if got := evalJS[string](t, b, `document.getElementById("countdown").textContent`); !strings.Contains(got, "left") {
		t.Fatalf("countdown %q", got)
	}
	b.checkPage(t, "item")
	b.pressTo(t, "a")
	b.do(t, chromedp.WaitReady(chromedp.CSS("#state")))
	if got := b.text(t, "#state"); got != "promoted" {
		t.Fatalf("approved: state %q", got)
	}
	b.checkPage(t, "result")
	rec := toolJSON[recallOut](t, s.mcpSession(t, tm.reader.Token, "2025-11-25"), "oml_recall",
		map[string]any{"query": "Accra copper cathodes price", "scope": tm.crew.ID})
	if len(rec.Hits) == 0 || rec.Hits[0].ArtifactID != first.ArtifactID {
		t.Fatalf("the approved claim is not recalled: %+v", rec)
	}

	// Next (n), then skip it (n): the next one is served, not the same.
	b.pressTo(t, "n")
	b.do(t, chromedp.WaitReady(chromedp.CSS("#approve")))
	if got := b.text(t, "blockquote.text"); !strings.Contains(got, "Tema Steel") {
		t.Fatalf("second serve: %q", got)
	}
	b.pressTo(t, "n")
	b.do(t, chromedp.WaitReady(chromedp.CSS("#approve")))
	if got := b.text(t, "blockquote.text"); !strings.Contains(got, "Lead time") {
		t.Fatalf("after a skip: %q", got)
	}
	// Reject this one with a reason: r moves to the reason, r again sends.
	b.press(t, "r")
	b.do(t, chromedp.SendKeys(chromedp.CSS("#reason"), "Unsourced lead time."))
	b.pressTo(t, "r")
	b.do(t, chromedp.WaitReady(chromedp.CSS("#state")))
	if got := b.text(t, "#state"); got != "rejected" {
		t.Fatalf("rejected: state %q", got)
	}
	mine := toolJSON[struct {
		Items []remembered `json:"items"`
	}](t, writer, "oml_my_work", map[string]any{})
	states := map[string]string{}
	for _, it := range mine.Items {
		states[it.ArtifactID] = it.State
	}
	if states[third.ArtifactID] != "rejected" || states[first.ArtifactID] != "promoted" || states[second.ArtifactID] != "held" {
		t.Fatalf("author's my_work: %v", states)
	}

	// A serve that expires: its verdict is refused in words, and nothing changes.
	b.open(t, s.URL+"/queue")
	b.pressTo(t, "n")
	b.do(t, chromedp.WaitReady(chromedp.CSS("#approve")))
	s.sql(t, `UPDATE admission.serves SET expires_at = now() - interval '1 second' WHERE consumed_at IS NULL`)
	s.sql(t, `UPDATE admission.artifacts SET leased_until = now() - interval '1 second' WHERE id = $1`, second.ArtifactID)
	b.pressTo(t, "a")
	b.do(t, chromedp.WaitReady(chromedp.CSS(".refusal")))
	if got := b.text(t, ".refusal"); !strings.Contains(got, "review.serve_expired") || !strings.Contains(got, "expired before a verdict") {
		t.Fatalf("expired serve: %q", got)
	}
	b.refused(410)
	b.checkPage(t, "refusal")
	if st := s.count(t, `SELECT count(*) FROM admission.artifacts WHERE id = $1 AND state = 'held'`, second.ArtifactID); st != 1 {
		t.Fatal("an expired serve's verdict changed the claim")
	}
	// From the refusal, n serves it again; approved, the queue is empty.
	b.pressTo(t, "n")
	b.do(t, chromedp.WaitReady(chromedp.CSS("#approve")))
	b.pressTo(t, "a")
	b.do(t, chromedp.WaitReady(chromedp.CSS("#state")))
	b.pressTo(t, "n")
	if got := b.text(t, "h1"); got != "Nothing to review" {
		t.Fatalf("an empty queue's page: %q", got)
	}
	b.checkPage(t, "empty")

	// Another site's page posting a form at the pages: the browser sends
	// no session cookie with it (SameSite=Strict), and nothing is served.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><title>x</title><main><form method="post" action="%s/review/serve"><input name="csrf" value="guess"></form></main><script>document.forms[0].submit()</script></html>`, s.URL)
	}))
	defer evil.Close()
	before := s.count(t, `SELECT count(*) FROM admission.serves`)
	b.navigate(t, chromedp.Navigate(strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)))
	b.do(t, chromedp.WaitReady(chromedp.CSS(".refusal")))
	if got := b.text(t, ".refusal"); !strings.Contains(got, "auth.invalid_key") {
		t.Fatalf("a cross-site form post: %q", got)
	}
	b.refused(401)
	if n := s.count(t, `SELECT count(*) FROM admission.serves`); n != before {
		t.Fatalf("a cross-site post served %d items", n-before)
	}

	// The human: sign out, sign in as the admin with a one-time link
	// (it asks first), and watch the inbox.
	b.open(t, s.URL+"/queue")
	b.navigate(t, chromedp.Click(chromedp.CSS(".who button")))
	link := decode[struct {
		Path string `json:"path"`
	}](t, s.do(t, "POST", "/v1/web/sign-in-codes", s.AdminKey, map[string]any{}), 201)
	b.open(t, s.URL+link.Path)
	if got := b.text(t, "#confirm"); got != "Sign in as admin" {
		t.Fatalf("the sign-in link's page: %q", got)
	}
	b.checkPage(t, "code")
	b.navigate(t, chromedp.Click(chromedp.CSS("#confirm")))
	if p := b.path(t); p != "/queue" {
		t.Fatalf("after the link, at %s", p)
	}
	b.open(t, s.URL+"/inbox")
	b.checkPage(t, "inbox-empty")
	q := toolJSON[struct {
		QuestionID string `json:"question_id"`
	}](t, writer, "question_post", map[string]any{"workarea": tm.crew.ID, "body": "Which supplier for Q1?",
		"options": []string{"Accra", "Tema"}, "expires_in_seconds": 3600})
	seen := toolJSON[inboxPage](t, writer, "inbox_read", map[string]any{"workarea": tm.crew.ID})
	// It appears without a reload.
	b.do(t, chromedp.WaitReady(chromedp.CSS("#item-"+q.QuestionID)))
	woke := make(chan string, 1)
	go func() {
		res, err := writer.CallTool(t.Context(), &mcp.CallToolParams{Name: "inbox_wait",
			Arguments: map[string]any{"workarea": tm.crew.ID, "since": seen.NextSince, "wait_seconds": 30}})
		body, _ := json.Marshal(res)
		woke <- fmt.Sprint(err, string(body))
	}()
	time.Sleep(300 * time.Millisecond)
	b.checkPage(t, "inbox")
	b.navigate(t, chromedp.Click(chromedp.CSS(`#item-`+q.QuestionID+` button[value="Accra"]`)))
	b.do(t, chromedp.WaitReady(chromedp.CSS("#resolved-"+q.QuestionID)))
	select {
	case got := <-woke:
		if !strings.Contains(got, "Accra") {
			t.Fatalf("inbox_wait woke with %s", got)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the agent's inbox_wait did not return after the answer")
	}
	// An approval with a deadline: its on_expiry is shown; decide it with a note.
	ap := toolJSON[struct {
		ApprovalID string `json:"approval_id"`
	}](t, writer, "signal_append", map[string]any{"workarea": tm.crew.ID, "kind": "approval", "body": "Order 40 t from Accra?",
		"expires_in_seconds": 3600, "on_expiry": "decline"})
	b.do(t, chromedp.WaitReady(chromedp.CSS("#item-"+ap.ApprovalID)))
	if got := b.text(t, "#item-"+ap.ApprovalID); !strings.Contains(got, "at the deadline: decline") {
		t.Fatalf("approval shows no on_expiry: %q", got)
	}
	b.do(t, chromedp.SendKeys(chromedp.CSS("#note-"+ap.ApprovalID), "Within budget."))
	b.navigate(t, chromedp.Click(chromedp.CSS(`#item-`+ap.ApprovalID+` button[value="approved"]`)))
	b.do(t, chromedp.WaitReady(chromedp.CSS("#resolved-"+ap.ApprovalID)))
	if got := b.text(t, "#resolved-"+ap.ApprovalID); !strings.Contains(got, "approved") || !strings.Contains(got, "Within budget.") {
		t.Fatalf("decided approval: %q", got)
	}
	b.checkPage(t, "inbox-resolved")

	// Overview → workarea → verify the chain.
	b.open(t, s.URL+"/overview")
	if got := b.text(t, "table.tree"); !strings.Contains(got, "metals-crew") || !strings.Contains(got, "committed") {
		t.Fatalf("overview: %q", got)
	}
	b.checkPage(t, "overview-admin")
	b.navigate(t, chromedp.Click(chromedp.CSS(`a[href="/workareas/`+tm.crew.ID+`"]`)))
	if got := b.text(t, "table.events"); !strings.Contains(got, "lifecycle.promote") {
		t.Fatalf("workarea events: %q", got)
	}
	b.navigate(t, chromedp.Click(chromedp.CSS(`a[href="/workareas/`+tm.crew.Parent+`"]`)))
	if got := b.text(t, "table.grants"); !strings.Contains(got, "reviewer-1") || !strings.Contains(got, "dreamer.review") {
		t.Fatalf("grants on universe.procurement: %q", got)
	}
	b.navigate(t, chromedp.Click(chromedp.CSS(`a[href="/workareas/`+tm.crew.ID+`"]`)))
	b.navigate(t, chromedp.Click(chromedp.CSS(`form[action$="/verify"] button`)))
	if got := b.text(t, "#verify-result"); !strings.Contains(got, "The chain holds") {
		t.Fatalf("verify: %q", got)
	}
	b.checkPage(t, "workarea")
}

// signIn signs the browser in with key from the sign-in page.
func signIn(t *testing.T, b *browser, key string) {
	t.Helper()
	if b.path(t) != "/sign-in" && b.path(t) != "/" {
		b.do(t, chromedp.Navigate(strings.TrimSuffix(evalJS[string](t, b, `location.origin`), "/")+"/sign-in"))
	}
	b.do(t, chromedp.WaitReady(chromedp.CSS("#key")), chromedp.SetValue(chromedp.CSS("#key"), key))
	b.navigate(t, chromedp.Submit(chromedp.CSS("#key")))
}
