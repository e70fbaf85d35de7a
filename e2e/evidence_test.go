package e2e

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/omlhub/oml/contexts/audit/evidence"
)

// The evidence export of a workarea with approvals, a rejection, a
// self-signed development review, a demotion and an erasure verifies
// offline with only the deployment's public key; a flipped byte anywhere
// fails, naming the record where it can; two principals approving each
// other's work are flagged; erased text never appears.
func TestEvidenceExport(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	lab := s.createWorkarea(t, "universe.procurement", "lab", "--status", "development")
	remember := func(k issuedKey, workarea, key, text string) remembered {
		t.Helper()
		return toolJSON[remembered](t, s.mcpSession(t, k.Token, "2025-11-25"), "oml_remember",
			map[string]any{"workarea": workarea, "claim_key": key, "text": text})
	}
	judge := func(k issuedKey, verdict, reason string) string {
		t.Helper()
		sv := decode[served](t, s.do(t, "POST", "/v1/reviews/serve", k.Token, nil), 200)
		decode[map[string]any](t, s.do(t, "POST", "/v1/reviews/"+sv.ServeID+"/verdict", k.Token, map[string]any{"verdict": verdict, "reason": reason}), 200)
		return sv.Item.ArtifactID
	}
	a := remember(tm.writer, tm.crew.ID, "a", "Accra quoted 412 USD/t.")
	judge(tm.reviewer, "approve", "sourced")
	b := remember(tm.writer, tm.crew.ID, "b", "Tema is always cheapest.")
	judge(tm.reviewer, "reject", "unsourced claim")
	c := remember(tm.author2, tm.crew.ID, "c", "SECRET-TO-ERASE lead time is six weeks.")
	if got := judge(tm.writer, "approve", "ok"); got != c.ArtifactID {
		t.Fatalf("writer-1 judged %s", got)
	}
	d := remember(tm.writer, tm.crew.ID, "d", "Copper futures rose.")
	if got := judge(tm.author2, "approve", "ok"); got != d.ArtifactID {
		t.Fatalf("writer-2 judged %s", got)
	}
	if r := s.do(t, "PUT", "/v1/review-settings", s.AdminKey, map[string]any{"self_signed_development": true}); r.Status != 200 {
		t.Fatalf("review settings: %d %s", r.Status, r.Body)
	}
	remember(tm.reviewer, lab.ID, "e", "A lab note.")
	sv := decode[served](t, s.do(t, "POST", "/v1/reviews/serve", tm.reviewer.Token, map[string]any{"workarea": lab.ID}), 200)
	if !sv.SelfSigned {
		t.Fatalf("the lab serve is not self-signed: %+v", sv)
	}
	decode[map[string]any](t, s.do(t, "POST", "/v1/reviews/"+sv.ServeID+"/verdict", tm.reviewer.Token, map[string]any{"verdict": "approve"}), 200)
	s.mustOML(t, s.AdminKey, "artifact", "demote", a.ArtifactID, "--reason", "stale")
	s.mustOML(t, s.AdminKey, "artifact", "erase", c.ArtifactID, "--reason", "personal data")
	s.mustOML(t, s.AdminKey, "ban", "add", "--principal", "reader-1", "--reason", "test")

	dir := t.TempDir()
	file := filepath.Join(dir, "evidence.json")
	s.mustOML(t, s.AdminKey, "evidence", "export", "--workarea", "universe.procurement", "--out", file)
	pub := decode[struct {
		PublicKey string `json:"public_key"`
	}](t, s.do(t, "GET", "/v1/signing-key", tm.reader.Token, nil), 200).PublicKey
	out := s.mustOML(t, s.AdminKey, "evidence", "verify", file, "--signing-key", pub)
	if !strings.Contains(out, "OK: every signature, record and link verifies") || !strings.Contains(out, "1 flagged reciprocal pairs") {
		t.Fatalf("verify: %s", out)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("SECRET-TO-ERASE")) {
		t.Fatal("erased text is in the evidence")
	}
	var f evidence.File
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, sub := range f.Submissions {
		states[sub.ArtifactID] = sub.State
	}
	if len(f.Submissions) != 5 || states[a.ArtifactID] != "demoted" || states[b.ArtifactID] != "rejected" || states[c.ArtifactID] != "erased" {
		t.Fatalf("submissions: %v", states)
	}
	var reasons, selfSigned []string
	for _, sv := range f.Serves {
		reasons = append(reasons, sv.Reason)
		if sv.SelfSigned {
			selfSigned = append(selfSigned, sv.ArtifactID)
		}
		if sv.ReviewerKeyID == "" || sv.ReviewerPrincipal == "" {
			t.Fatalf("a serve without its reviewer: %+v", sv)
		}
	}
	if !strings.Contains(strings.Join(reasons, "|"), "unsourced claim") || len(selfSigned) != 1 {
		t.Fatalf("serves: reasons %v, self-signed %v", reasons, selfSigned)
	}
	types := map[string]bool{}
	for _, e := range f.Journal {
		types[e.Type] = true
	}
	for _, want := range []string{"lifecycle.promote", "lifecycle.demote", "lifecycle.erase", "grant.add", "key.issue", "ban.add", "lifecycle.reject", "review.serve"} {
		if !types[want] {
			t.Errorf("the journal segment has no %s event", want)
		}
	}
	// (Principals are named by id, as the serves and envelopes name them.)
	if p := f.Reciprocal.Pairs; len(p) != 1 || !p[0].Flagged || p[0].AApprovedB != 1 || p[0].BApprovedA != 1 {
		t.Fatalf("reciprocal pairs: %+v", f.Reciprocal)
	}

	// Tampering: targeted changes fail naming their record ...
	key, _ := base64.StdEncoding.DecodeString(pub)
	check := func(name string, mutate func(*evidence.File), record string) {
		t.Helper()
		var g evidence.File
		if err := json.Unmarshal(raw, &g); err != nil {
			t.Fatal(err)
		}
		mutate(&g)
		rep := evidence.Verify(&g, ed25519.PublicKey(key))
		found := false
		for _, p := range rep.Problems {
			found = found || p.Record == record
		}
		if rep.OK || !found {
			t.Errorf("%s: verified %v, problems %+v, want one naming %s", name, rep.OK, rep.Problems, record)
		}
	}
	check("a reason", func(g *evidence.File) { g.Serves[1].Reason = "sourced" }, "serve:"+f.Serves[1].ServeID)
	check("a claim key", func(g *evidence.File) { g.Submissions[0].ClaimKey = "z" }, "submission:"+f.Submissions[0].ArtifactID)
	check("a state", func(g *evidence.File) { g.Submissions[1].State = "promoted" }, "submission:"+f.Submissions[1].ArtifactID)
	check("a dropped serve", func(g *evidence.File) { g.Serves = g.Serves[1:] }, "serve:"+f.Serves[0].ServeID)
	check("an event's actor", func(g *evidence.File) { g.Journal[len(g.Journal)-1].Actor = "key_someone" }, "event:"+strconv.FormatInt(f.Journal[len(f.Journal)-1].Seq, 10))
	check("the manifest", func(g *evidence.File) { g.Manifest.Workarea.Path = "universe" }, "manifest")
	// ... and a flipped byte anywhere fails.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		bad := bytes.Clone(raw)
		pos := rng.IntN(len(bad))
		bad[pos] ^= 0x01
		var g evidence.File
		dec := json.NewDecoder(bytes.NewReader(bad))
		dec.DisallowUnknownFields()
		if dec.Decode(&g) != nil {
			continue // no longer an evidence file: refused as such
		}
		if evidence.Verify(&g, ed25519.PublicKey(key)).OK {
			t.Errorf("a byte flipped at %d (%q) still verifies", pos, raw[max(0, pos-20):min(len(raw), pos+20)])
		}
	}
	// The CLI says so too, and exits non-zero.
	bad := bytes.Replace(raw, []byte("unsourced claim"), []byte("unsourced claiM"), 1)
	if err := os.WriteFile(file, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if stdout, _, err := s.oml(t, s.AdminKey, "evidence", "verify", file, "--signing-key", pub); err == nil || !strings.Contains(stdout, "FAIL serve:") {
		t.Fatalf("verify of a changed file: %v %s", err, stdout)
	}
	// A file's own key proves nothing: verify wants the deployment's.
	if _, stderr, err := s.oml(t, s.AdminKey, "evidence", "verify", file); err == nil || !strings.Contains(stderr, "--signing-key is required") {
		t.Fatalf("verify without a key: %v %s", err, stderr)
	}

	// An admin of the subtree who is denied reader on the lab exports no
	// lab claim and sees the lab's events and the tenant's key events only
	// as links.
	sub := s.issueKey(t, "auditor-1", "admin")
	s.grant(t, sub.KeyID, "universe.procurement", "admin", "allow")
	s.grant(t, sub.KeyID, "universe.procurement", "reader", "allow")
	s.grant(t, sub.KeyID, "universe.procurement.lab", "reader", "deny")
	limited := filepath.Join(dir, "limited.json")
	s.mustOML(t, sub.Token, "evidence", "export", "--workarea", "universe.procurement", "--out", limited)
	if out := s.mustOML(t, sub.Token, "evidence", "verify", limited, "--signing-key", pub); !strings.Contains(out, "OK") {
		t.Fatalf("verify the limited file: %s", out)
	}
	lraw, _ := os.ReadFile(limited)
	var lf evidence.File
	if err := json.Unmarshal(lraw, &lf); err != nil {
		t.Fatal(err)
	}
	for _, sub := range lf.Submissions {
		if sub.WorkareaID == lab.ID {
			t.Fatalf("a lab claim in the limited export: %+v", sub)
		}
	}
	if len(lf.Submissions) != 4 {
		t.Fatalf("the limited export holds %d submissions, want 4", len(lf.Submissions))
	}
	for _, e := range lf.Journal {
		if !e.Redacted && (e.Workarea == lab.ID || strings.HasPrefix(e.Type, "key.") || strings.HasPrefix(e.Type, "ban.")) {
			t.Fatalf("the limited export shows %s in %q", e.Type, e.Workarea)
		}
	}

	// Only an admin of the workarea exports it.
	for name, c := range map[string]struct {
		key, query string
		status     int
	}{
		"a reviewer":    {tm.reviewer.Token, "workarea=universe.procurement", 403},
		"no workarea":   {s.AdminKey, "", 400},
		"a bad time":    {s.AdminKey, "workarea=universe&from=yesterday", 400},
		"reversed":      {s.AdminKey, "workarea=universe&from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", 400},
		"unknown param": {s.AdminKey, "workarea=universe&format=csv", 400},
	} {
		if r := s.do(t, "GET", "/v1/evidence?"+c.query, c.key, nil); r.Status != c.status {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
}
