package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

type enrolled struct {
	RequestID string `json:"request_id"`
	Token     string `json:"token"`
	Status    string `json:"status"`
	KeyID     string `json:"key_id"`
}

// Self-service enrolment (issue 15): a request without a key gets a
// pending token that every ordinary route refuses exactly as an unknown
// one; it lands in the admins' inbox (and no one else's); an admin's
// approval there makes the same token a working key with the role and
// grants given, in one transaction, while the long-poll answers approved;
// a refusal; the pending cap; the rate per peer, which a spoofed
// X-Forwarded-For from an untrusted peer does not escape.
func TestEnrolment(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_ENROL_TENANT=acme", "OML_ENROL_PENDING_MAX=3", "OML_ENROL_PER_HOUR=4")
	tm := newTeam(t, s)

	req := decode[enrolled](t, s.do(t, "POST", "/v1/enrol", "", map[string]any{"reason": "nightly procurement agent for the metals crew"}), 201)
	if !strings.HasPrefix(req.RequestID, "enr_") || !strings.HasPrefix(req.Token, "oml_k_") || req.Status != "pending" {
		t.Fatalf("enrol: %+v", req)
	}
	unknown := s.do(t, "GET", "/v1/whoami", "oml_k_0000000000000000000000000000000000000000000000", nil)
	pending := s.do(t, "GET", "/v1/whoami", req.Token, nil)
	if pending.Status != 401 || !sameRefusal(pending.Body, unknown.Body) {
		t.Fatalf("a pending token: %d %s, an unknown one: %d %s", pending.Status, pending.Body, unknown.Status, unknown.Body)
	}
	mcp := s.do(t, "POST", "/mcp", req.Token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream")
	if mcp.Status != 401 {
		t.Fatalf("a pending token on /mcp: %d %s", mcp.Status, mcp.Body)
	}
	if st := decode[enrolled](t, s.do(t, "GET", "/v1/enrol/status", req.Token, nil), 200); st.Status != "pending" {
		t.Fatalf("status: %+v", st)
	}
	for name, c := range map[string]struct {
		body any
		code string
	}{
		"no reason":        {map[string]any{"reason": ""}, "request.validation"},
		"two lines":        {map[string]any{"reason": "a\nb"}, "request.validation"},
		"200 characters":   {map[string]any{"reason": strings.Repeat("x", 200)}, "request.validation"},
		"an unknown field": {map[string]any{"reason": "x", "role": "admin"}, "request.validation"},
	} {
		if r := s.do(t, "POST", "/v1/enrol", "", c.body); r.code() != c.code {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}

	// The request is in the admins' inbox only.
	items := decode[inboxOut](t, s.do(t, "GET", "/v1/inbox", s.AdminKey, nil), 200)
	var itemID string
	for _, it := range items.Items {
		if it.Kind == "enrol_request" {
			itemID = it.ID
		}
	}
	if itemID == "" {
		t.Fatalf("no enrol_request in the admin's inbox: %+v", items)
	}
	if r := s.do(t, "GET", "/v1/inbox", tm.writer.Token, nil); strings.Contains(string(r.Body), itemID) {
		t.Fatalf("a writer sees the enrolment request: %s", r.Body)
	}
	reader := s.issueKey(t, "root-reader", "reader")
	s.grant(t, reader.KeyID, "universe", "reader", "allow")
	brief, _ := callTool(t, s.mcpSession(t, reader.Token, "2026-07-28"), "session_brief", map[string]any{"workarea": "universe"})
	if strings.Contains(string(brief), itemID) || strings.Contains(string(brief), "nightly procurement agent") {
		t.Fatalf("a root reader's brief shows the enrolment request: %s", brief)
	}
	if r := s.do(t, "GET", "/v1/inbox/"+itemID, reader.Token, nil); r.Status == 200 {
		t.Fatalf("a root reader reads the enrolment request: %s", r.Body)
	}

	// Approval: the long-poll answers the moment the admin decides.
	var wg sync.WaitGroup
	var polled enrolled
	var pollTook time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		r := s.do(t, "GET", "/v1/enrol/status?wait=30", req.Token, nil)
		pollTook = time.Since(start)
		_ = json.Unmarshal(r.Body, &polled)
	}()
	time.Sleep(500 * time.Millisecond)
	bad := s.do(t, "POST", "/v1/inbox/"+itemID+"/decide", s.AdminKey, map[string]any{"decision": "approve", "role": "admin"})
	if bad.code() != "request.validation" {
		t.Fatalf("an admin role for an enrolled agent: %d %s", bad.Status, bad.Body)
	}
	if r := s.do(t, "POST", "/v1/inbox/"+itemID+"/decide", s.AdminKey, map[string]any{"decision": "approve", "role": "dreamer",
		"grants": []map[string]any{{"workarea": "universe.procurement", "scope": "reader"}, {"workarea": "nowhere", "scope": "writer"}}}); r.Status != 404 {
		t.Fatalf("a grant on an unknown workarea: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "GET", "/v1/whoami", req.Token, nil); r.Status != 401 {
		t.Fatalf("a failed approval left a working key: %d", r.Status)
	}
	decode[map[string]any](t, s.do(t, "POST", "/v1/inbox/"+itemID+"/decide", s.AdminKey, map[string]any{"decision": "approve", "note": "welcome",
		"role": "dreamer", "grants": []map[string]any{{"workarea": "universe.procurement", "scope": "reader"}, {"workarea": "universe.procurement.metals-crew", "scope": "writer"}}}), 200)
	wg.Wait()
	if polled.Status != "approved" || polled.KeyID == "" || pollTook > 10*time.Second {
		t.Fatalf("the long-poll: %+v after %s", polled, pollTook)
	}
	who := decode[struct {
		KeyID string `json:"key_id"`
		Role  string `json:"role"`
	}](t, s.do(t, "GET", "/v1/whoami", req.Token, nil), 200)
	if who.KeyID != polled.KeyID || who.Role != "dreamer" {
		t.Fatalf("the enrolled key: %+v", who)
	}
	if r := s.do(t, "POST", "/v1/memories", req.Token, map[string]any{"workarea": tm.crew.ID, "claim_key": "hello", "text": "Enrolled and writing."}); r.Status != 201 {
		t.Fatalf("the enrolled key writes: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "POST", "/v1/inbox/"+itemID+"/decide", s.AdminKey, map[string]any{"decision": "decline"}); r.Status != 409 {
		t.Fatalf("a second decision: %d %s", r.Status, r.Body)
	}

	// A refusal.
	second := decode[enrolled](t, s.do(t, "POST", "/v1/enrol", "", map[string]any{"reason": "second agent"}), 201)
	var secondItem string
	for _, it := range decode[inboxOut](t, s.do(t, "GET", "/v1/inbox?status=open", s.AdminKey, nil), 200).Items {
		if it.Kind == "enrol_request" {
			secondItem = it.ID
		}
	}
	decode[map[string]any](t, s.do(t, "POST", "/v1/inbox/"+secondItem+"/decide", s.AdminKey, map[string]any{"decision": "decline", "note": "unknown agent"}), 200)
	if st := decode[enrolled](t, s.do(t, "GET", "/v1/enrol/status", second.Token, nil), 200); st.Status != "refused" {
		t.Fatalf("refused status: %+v", st)
	}
	if r := s.do(t, "GET", "/v1/whoami", second.Token, nil); r.Status != 401 {
		t.Fatalf("a refused token works: %d", r.Status)
	}

	// The rate per peer (4 an hour, two used): a spoofed X-Forwarded-For
	// from this untrusted peer does not make a new peer.
	for i := range 2 {
		if r := s.do(t, "POST", "/v1/enrol", "", map[string]any{"reason": fmt.Sprintf("agent %d", i)}, "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i)); r.Status != 201 {
			t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
		}
	}
	r := s.do(t, "POST", "/v1/enrol", "", map[string]any{"reason": "one more"}, "X-Forwarded-For", "203.0.113.99")
	if r.Status != 429 || r.code() != "limit.rate" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("past the peer's rate: %d %s", r.Status, r.Body)
	}
	// Two are pending now; the cap is three: the audit trail has them.
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE tenant_id = $1 AND event_type = 'enrol.request'`, s.TenantID); n != 4 {
		t.Fatalf("enrol.request events: %d", n)
	}
}

// The pending cap: a deployment holding its maximum of pending requests
// refuses more; and enrolment is closed where no tenant is named.
func TestEnrolmentBounds(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_ENROL_TENANT=acme", "OML_ENROL_PENDING_MAX=2")
	for i := range 2 {
		decode[enrolled](t, s.do(t, "POST", "/v1/enrol", "", map[string]any{"reason": fmt.Sprintf("agent %d", i)}), 201)
	}
	if r := s.do(t, "POST", "/v1/enrol", "", map[string]any{"reason": "third"}); r.Status != 422 || r.code() != "limit.ceiling" {
		t.Fatalf("past the pending cap: %d %s", r.Status, r.Body)
	}
	closed := startServer(t)
	if r := closed.do(t, "POST", "/v1/enrol", "", map[string]any{"reason": "hello"}); r.Status != 404 {
		t.Fatalf("a closed deployment: %d %s", r.Status, r.Body)
	}
	if r := closed.do(t, "GET", "/v1/enrol/status", "oml_k_nope", nil); r.Status != 404 {
		t.Fatalf("status on a closed deployment: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "GET", "/v1/enrol/status", "oml_k_nope", nil); r.Status != 401 {
		t.Fatalf("status with a bad token: %d %s", r.Status, r.Body)
	}
}

// `oml enrol` with no key: it waits while an admin approves with `oml
// inbox decide … --role --grant`, then stores the URL and the key at mode
// 0600, and the next command needs no environment.
func TestEnrolCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_ENROL_TENANT=acme")
	s.createWorkarea(t, "universe", "procurement")
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	cmd := exec.Command(bins.cli, "--url", s.URL, "enrol", "--reason", "cli agent")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var item string
	for deadline := time.Now().Add(10 * time.Second); item == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, it := range decode[inboxOut](t, s.do(t, "GET", "/v1/inbox?status=open", s.AdminKey, nil), 200).Items {
			if it.Kind == "enrol_request" {
				item = it.ID
			}
		}
	}
	if item == "" {
		t.Fatalf("no request arrived: %s", stderr.String())
	}
	s.mustOML(t, s.AdminKey, "inbox", "decide", item, "approve", "--role", "reader", "--grant", "universe.procurement:reader")
	if err := cmd.Wait(); err != nil || !strings.Contains(stdout.String(), "approved: key key_") {
		t.Fatalf("oml enrol: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	path := filepath.Join(home, ".config", "oml", "config.toml")
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v %v", st, err)
	}
	who := exec.Command(bins.cli, "whoami")
	who.Env = env
	out, err := who.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "reader") {
		t.Fatalf("whoami from the stored config: %v %s", err, out)
	}
}
