package e2e

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/omlhub/oml/platform/canonjson"
)

// Review policy is inherited down the tree: two approvals, a blocking
// scanner, and self-signed review in development workareas when the tenant
// allows it (marked self_signed).
func TestReviewPolicies(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	third := s.issueKey(t, "reviewer-3", "dreamer")
	s.grant(t, third.KeyID, "universe.procurement", "dreamer.review", "allow")

	// Two approvals, set on procurement, apply to metals-crew below it.
	if r := s.do(t, "PUT", "/v1/workareas/universe.procurement/review-policy", s.AdminKey,
		`{"required_approvals":2,"held_ttl_seconds":3600,"scan":"block"}`); r.Status != 200 {
		t.Fatalf("set policy: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "PUT", "/v1/workareas/universe.procurement/review-policy", tm.writer.Token,
		`{"required_approvals":1,"held_ttl_seconds":3600,"scan":"flag"}`); r.Status != 403 {
		t.Fatalf("policy by a non-admin: %d", r.Status)
	}
	cs := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	fakeKey := "AKIA" + strings.Repeat("Q", 16)
	if code, body := toolError(t, cs, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "leak", "text": "use " + fakeKey}); code != "submission.scan_blocked" || strings.Contains(string(body), fakeKey) {
		t.Fatalf("blocked scan: %s %s", code, body)
	}
	got := toolJSON[remembered](t, cs, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "two", "text": "needs two"})
	for i, k := range []issuedKey{tm.reviewer, third} {
		srv, ok := s.serve(t, k.Token)
		if !ok || srv.Item.ArtifactID != got.ArtifactID {
			t.Fatalf("serve %d: %v %+v", i, ok, srv)
		}
		// The first reviewer is never served the same item again.
		if i == 0 {
			decode[map[string]any](t, s.verdict(t, k.Token, srv.ServeID, "approve"), 200)
			if _, ok := s.serve(t, k.Token); ok {
				t.Fatal("a reviewer was served an item it already judged")
			}
			continue
		}
		v := decode[struct {
			State     string `json:"state"`
			Approvals int    `json:"approvals"`
		}](t, s.verdict(t, k.Token, srv.ServeID, "approve"), 200)
		if v.State != "promoted" || v.Approvals != 2 {
			t.Fatalf("second approval: %+v", v)
		}
	}

	// Flag instead of block: the finding travels to the reviewer.
	s.do(t, "PUT", "/v1/workareas/universe.procurement/review-policy", s.AdminKey, `{"required_approvals":1,"held_ttl_seconds":3600,"scan":"flag"}`)
	flagged := toolJSON[remembered](t, cs, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "flagged", "text": "key " + fakeKey})
	r := s.do(t, "POST", "/v1/reviews/serve", tm.reviewer.Token, nil)
	var findings struct {
		Item struct {
			Findings []struct{ Rule, Message string } `json:"findings"`
		} `json:"item"`
	}
	if json.Unmarshal(r.Body, &findings) != nil || len(findings.Item.Findings) != 1 ||
		findings.Item.Findings[0].Rule != "credential.aws_access_key" || strings.Contains(findings.Item.Findings[0].Message, "QQQQ") {
		t.Fatalf("served findings: %s", r.Body)
	}
	var srv served
	_ = json.Unmarshal(r.Body, &srv)
	if srv.Item.ArtifactID != flagged.ArtifactID {
		t.Fatalf("served %s", srv.Item.ArtifactID)
	}
	decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, srv.ServeID, "reject"), 200)

	// Self-signed review: off by default, then allowed in development only.
	dev := s.createWorkarea(t, "universe.procurement", "sandbox")
	solo := toolJSON[remembered](t, cs, "oml_remember", map[string]any{"workarea": dev.ID, "claim_key": "solo", "text": "my own"})
	if _, ok := s.serve(t, tm.writer.Token); ok {
		t.Fatal("self-signed review served while the switch is off")
	}
	if r := s.do(t, "PUT", "/v1/review-settings", s.AdminKey, `{"self_signed_development":true}`); r.Status != 200 {
		t.Fatalf("switch: %d %s", r.Status, r.Body)
	}
	mine, ok := s.serve(t, tm.writer.Token)
	if !ok || mine.Item.ArtifactID != solo.ArtifactID || !mine.SelfSigned {
		t.Fatalf("self-signed serve: %v %+v", ok, mine)
	}
	v := decode[struct {
		State      string `json:"state"`
		SelfSigned bool   `json:"self_signed"`
	}](t, s.verdict(t, tm.writer.Token, mine.ServeID, "approve"), 200)
	if v.State != "promoted" || !v.SelfSigned {
		t.Fatalf("self-signed verdict: %+v", v)
	}
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE event_type = 'lifecycle.promote' AND payload->>'self_signed' = 'true'`); n != 1 {
		t.Fatalf("%d self-signed promotions journalled", n)
	}
	verifyAllEnvelopes(t, s)
}

// A new version of the caller's own claim, and nobody else's.
func TestSupersede(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	v1 := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token,
		map[string]any{"workarea": tm.crew.ID, "claim_key": "quote", "text": "412 USD/t"}), 201)
	v2 := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token,
		map[string]any{"workarea": tm.crew.ID, "supersedes": v1.ArtifactID, "text": "405 USD/t"}), 201)
	if v2.ClaimKey != "quote" || v2.Version != 2 {
		t.Fatalf("new version: %+v", v2)
	}
	r := s.do(t, "POST", "/v1/memories", tm.author2.Token, map[string]any{"workarea": tm.crew.ID, "supersedes": v1.ArtifactID, "text": "hijack"})
	if r.Status != 404 || r.code() != "access.not_found" {
		t.Fatalf("superseding another's claim: %d %s", r.Status, r.Body)
	}
	// Another tenant's artifact is no lineage target either.
	var other struct {
		AdminKey string `json:"admin_key"`
	}
	_ = json.Unmarshal([]byte(s.run(t, "bootstrap", "--tenant", "globex")), &other)
	decode[map[string]any](t, s.do(t, "POST", "/v1/workareas", other.AdminKey, `{"parent":"universe","name":"ops"}`), 201)
	who := decode[struct {
		KeyID string `json:"key_id"`
	}](t, s.do(t, "GET", "/v1/whoami", other.AdminKey, nil), 200)
	decode[map[string]any](t, s.do(t, "POST", "/v1/grants", other.AdminKey,
		map[string]string{"key_id": who.KeyID, "workarea": "universe.ops", "scope": "writer", "effect": "allow"}), 201)
	r = s.do(t, "POST", "/v1/memories", other.AdminKey, map[string]any{"verb": "learn", "workarea": "universe.ops", "claim_key": "x", "text": "t", "derives_from": []string{v1.ArtifactID}})
	if r.Status != 404 || r.code() != "access.not_found" {
		t.Fatalf("learn from another tenant's artifact: %d %s", r.Status, r.Body)
	}
	// Deriving from one's own held claim is fine.
	r = s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{"verb": "learn", "workarea": tm.crew.ID, "claim_key": "x", "text": "t", "derives_from": []string{v1.ArtifactID}})
	if r.Status != 201 {
		t.Fatalf("learn from own held claim: %d %s", r.Status, r.Body)
	}
	verifyAllEnvelopes(t, s)
}

// verifyAllEnvelopes checks every stored envelope against the published key.
func verifyAllEnvelopes(t testing.TB, s *server) {
	t.Helper()
	key := decode[struct {
		PublicKey string `json:"public_key"`
	}](t, s.do(t, "GET", "/v1/signing-key", s.AdminKey, nil), 200)
	pub, err := base64.StdEncoding.DecodeString(key.PublicKey)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		t.Fatalf("public key: %v", err)
	}
	conn, err := pgx.Connect(t.Context(), s.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	rows, err := conn.Query(t.Context(), `SELECT id, envelope::text, signature FROM admission.artifacts`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var id, env string
		var sig []byte
		if err := rows.Scan(&id, &env, &sig); err != nil {
			t.Fatal(err)
		}
		canon, err := canonjson.Canonicalize([]byte(env))
		if err != nil || !ed25519.Verify(pub, canon, sig) {
			t.Fatalf("envelope of %s does not verify", id)
		}
		n++
	}
	if err := rows.Err(); err != nil || n == 0 {
		t.Fatalf("verified %d envelopes: %v", n, err)
	}
}
