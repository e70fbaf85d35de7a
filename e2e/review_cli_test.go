package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// `oml review` runs the serve ceremony in a terminal: interactively (an
// approval, a skip that is not served back, a rejection that insists on
// a reason, until the queue is empty), and step by step for scripts
// (next, release, approve, reject, queue, each with --json).
func TestReviewCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	writer := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	var items []remembered
	for _, c := range []struct{ key, text string }{
		{"alpha", "Accra Metals quoted 412 USD/t."},
		{"beta", "Tema Steel is always cheapest."},
		{"gamma", "Lead time from Accra is six weeks."},
	} {
		items = append(items, toolJSON[remembered](t, writer, "oml_remember", map[string]any{
			"workarea": tm.crew.ID, "claim_key": c.key, "text": c.text}))
	}
	is := func(id, state string) bool {
		return s.count(t, `SELECT count(*) FROM admission.artifacts WHERE id = $1 AND state = $2`, id, state) == 1
	}

	// The queue, human and JSON.
	out := s.mustOML(t, tm.reviewer.Token, "review", "queue")
	if !strings.Contains(out, "universe.procurement.metals-crew") || !strings.Contains(out, "3 claims and 0 edges wait for you") {
		t.Fatalf("review queue: %s", out)
	}
	var q reviewQueue
	if err := json.Unmarshal([]byte(s.mustOML(t, tm.reviewer.Token, "--json", "review", "queue")), &q); err != nil || q.Claims != 3 {
		t.Fatalf("review queue --json: %+v %v", q, err)
	}

	// Interactive: approve alpha, skip beta, reject gamma (first without a
	// reason, refused), then the skipped beta is not served again this run.
	cmd := exec.Command(bins.cli, "review")
	cmd.Env = s.cliEnv(tm.reviewer.Token)
	cmd.Stdin = strings.NewReader("a\nlooks right\ns\nr\n\nr\nunsourced\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("oml review: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{
		"Accra Metals quoted 412 USD/t.", "policy: 0 of 1 approvals given", "in universe.procurement.metals-crew",
		"findings: 0", "attachments: 0", "approved " + items[0].ArtifactID + ": now promoted",
		"skipped (released)", "A rejection needs a reason.", "rejected " + items[2].ArtifactID + ": now rejected",
		"The queue is empty (2 reviewed, 1 skipped).",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("oml review output lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "Tema Steel") != 1 {
		t.Fatalf("the skipped item was served again:\n%s", got)
	}
	if !is(items[0].ArtifactID, "promoted") || !is(items[1].ArtifactID, "held") || !is(items[2].ArtifactID, "rejected") {
		t.Fatal("states after oml review")
	}

	// Scripts: next (JSON), release, next again, reject needs --reason, approve.
	var sv served
	if err := json.Unmarshal([]byte(s.mustOML(t, tm.reviewer.Token, "--json", "review", "next", "--workarea", tm.crew.Path)), &sv); err != nil || sv.Item.ArtifactID != items[1].ArtifactID {
		t.Fatalf("review next --json: %+v %v", sv, err)
	}
	if out := s.mustOML(t, tm.reviewer.Token, "review", "release", sv.ServeID); !strings.Contains(out, "released "+sv.ServeID) {
		t.Fatalf("review release: %s", out)
	}
	out = s.mustOML(t, tm.reviewer.Token, "review", "next")
	if !strings.Contains(out, "Tema Steel") {
		t.Fatalf("review next after a release: %s", out)
	}
	serveID := strings.Fields(out)[1]
	if _, stderr, err := s.oml(t, tm.reviewer.Token, "review", "reject", serveID); err == nil || !strings.Contains(stderr, "--reason is required") {
		t.Fatalf("reject without a reason: %v %s", err, stderr)
	}
	out = s.mustOML(t, tm.reviewer.Token, "--json", "review", "approve", serveID, "--reason", "checked the quote")
	var v struct {
		State string `json:"state"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.State != "promoted" {
		t.Fatalf("review approve --json: %s", out)
	}
	// A second verdict on the spent serve is the server's typed refusal.
	if _, stderr, err := s.oml(t, tm.reviewer.Token, "review", "approve", serveID); err == nil || !strings.Contains(stderr, "review.serve_consumed") {
		t.Fatalf("second verdict: %v %s", err, stderr)
	}
	// Empty: nothing to review, in words and as JSON null.
	if out := s.mustOML(t, tm.reviewer.Token, "review", "next"); !strings.Contains(out, "Nothing to review.") {
		t.Fatalf("review next on an empty queue: %s", out)
	}
	if out := strings.TrimSpace(s.mustOML(t, tm.reviewer.Token, "--json", "review", "next")); out != "null" {
		t.Fatalf("review next --json on an empty queue: %s", out)
	}
	cmd = exec.Command(bins.cli, "review")
	cmd.Env = s.cliEnv(tm.reviewer.Token)
	cmd.Stdin = strings.NewReader("")
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "The queue is empty (0 reviewed, 0 skipped).") {
		t.Fatalf("oml review on an empty queue: %v %s", err, out)
	}

	// A one-time web link for this key: the code, never the key.
	link := s.mustOML(t, tm.reviewer.Token, "web", "link")
	if !strings.HasPrefix(link, s.URL+"/sign-in/code?code=oml_c_") || strings.Contains(link, tm.reviewer.Token) {
		t.Fatalf("web link: %s", link)
	}
}
