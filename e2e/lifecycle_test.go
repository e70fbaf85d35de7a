package e2e

import (
	"strings"
	"testing"
)

// Admin lifecycle: demote takes a claim out of reads at once, erase keeps
// a tombstone and frees the claim key, bans refuse a principal's writes.
func TestDemoteEraseBan(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	// The admin administers the procurement subtree.
	a := tm.promote(t, tm.writer, tm.reviewer, tm.crew.ID, "quote", "412 USD/t")
	if r := s.do(t, "GET", "/v1/artifacts/"+a, tm.reader.Token, nil); r.Status != 200 {
		t.Fatalf("reader before demote: %d", r.Status)
	}
	if r := s.do(t, "POST", "/v1/artifacts/"+a+"/demote", tm.writer.Token, `{"reason":"stale"}`); r.Status != 403 || r.code() != "access.denied" {
		t.Fatalf("demote by a non-admin: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "POST", "/v1/artifacts/"+a+"/demote", s.AdminKey, `{}`); r.Status != 400 {
		t.Fatalf("demote without a reason: %d %s", r.Status, r.Body)
	}
	out := s.mustOML(t, s.AdminKey, "artifact", "demote", a, "--reason", "superseded by the Q1 quote")
	if !strings.Contains(out, "demoted") {
		t.Fatalf("demote: %s", out)
	}
	if r := s.do(t, "GET", "/v1/artifacts/"+a, tm.reader.Token, nil); r.Status != 404 {
		t.Fatalf("reader after demote: %d", r.Status)
	}
	if r := s.do(t, "POST", "/v1/artifacts/"+a+"/demote", s.AdminKey, `{"reason":"again"}`); r.Status != 409 || r.code() != "lifecycle.invalid_transition" {
		t.Fatalf("second demote: %d %s", r.Status, r.Body)
	}
	mine := toolJSON[struct {
		Items []remembered `json:"items"`
	}](t, s.mcpSession(t, tm.writer.Token, "2025-11-25"), "oml_my_work", map[string]any{})
	if len(mine.Items) != 1 || mine.Items[0].State != "demoted" {
		t.Fatalf("my_work after demote: %+v", mine)
	}

	s.mustOML(t, s.AdminKey, "artifact", "erase", a, "--reason", "requested by the supplier")
	art := decode[struct {
		State string  `json:"state"`
		Text  *string `json:"text"`
	}](t, s.do(t, "GET", "/v1/artifacts/"+a, tm.writer.Token, nil), 200)
	if art.State != "erased" || art.Text != nil {
		t.Fatalf("tombstone: %+v", art)
	}
	if n := s.count(t, `SELECT count(*) FROM admission.artifacts WHERE id = $1 AND text IS NULL AND findings = '[]' AND attachments = '[]'`, a); n != 1 {
		t.Fatal("erased content is still stored")
	}
	// The claim key is free again.
	cs := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	toolJSON[remembered](t, cs, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "quote", "text": "a new claim"})

	// A ban refuses the principal's submissions; lifting it restores them.
	out = s.mustOML(t, s.AdminKey, "--json", "ban", "add", "--principal", "writer-1", "--reason", "leaked a credential")
	var ban struct {
		BanID string `json:"ban_id"`
	}
	if err := jsonUnmarshal(out, &ban); err != nil || ban.BanID == "" {
		t.Fatalf("ban add: %s", out)
	}
	if code, _ := toolError(t, cs, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "after-ban", "text": "t"}); code != "access.banned" {
		t.Fatalf("banned author: %s", code)
	}
	if list := s.mustOML(t, s.AdminKey, "ban", "list"); !strings.Contains(list, "writer-1") {
		t.Fatalf("ban list: %s", list)
	}
	s.mustOML(t, s.AdminKey, "ban", "lift", ban.BanID)
	toolJSON[remembered](t, cs, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "after-ban", "text": "t"})
	if out := s.mustOML(t, s.AdminKey, "admin", "journal", "verify"); !strings.Contains(out, "ok") {
		t.Fatalf("journal: %s", out)
	}
	for _, typ := range []string{"lifecycle.demote", "lifecycle.erase", "ban.add", "ban.lift"} {
		if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE event_type = $1`, typ); n != 1 {
			t.Errorf("%d %s events", n, typ)
		}
	}
}
