package e2e

import (
	"testing"
)

// POST /v1/reviews/serve takes an optional {"workarea"}: the next item of
// that subtree only. A workarea the key cannot see is a missing one; one it
// sees but reviews nowhere in is access.denied.
func TestServeOneSubtree(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	tin := s.createWorkarea(t, "universe.procurement", "tin-crew", "--status", "committed")
	s.createWorkarea(t, "universe", "legal")
	writer := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	older := toolJSON[remembered](t, writer, "oml_remember", map[string]any{
		"workarea": tm.crew.ID, "claim_key": "metal-first", "text": "Accra Metals quoted 412 USD/t."})
	newer := toolJSON[remembered](t, writer, "oml_remember", map[string]any{
		"workarea": tin.ID, "claim_key": "tin-second", "text": "Tin from Bolivia ships in March."})

	serveIn := func(key string, body any) reply {
		t.Helper()
		return s.do(t, "POST", "/v1/reviews/serve", key, body)
	}
	// By id: the newer item, passing the older one in another subtree.
	got := decode[served](t, serveIn(tm.reviewer.Token, map[string]any{"workarea": tin.ID}), 200)
	if got.Item.ArtifactID != newer.ArtifactID {
		t.Fatalf("served %s from tin-crew, want %s", got.Item.ArtifactID, newer.ArtifactID)
	}
	// By path, and an ancestor of both crews.
	if r := serveIn(tm.reviewer.Token, map[string]any{"workarea": "universe.procurement.tin-crew"}); r.Status != 204 {
		t.Fatalf("tin-crew again (its only item is leased): %d %s", r.Status, r.Body)
	}
	got = decode[served](t, serveIn(tm.reviewer.Token, map[string]any{"workarea": "universe.procurement"}), 200)
	if got.Item.ArtifactID != older.ArtifactID {
		t.Fatalf("served %s from procurement, want %s", got.Item.ArtifactID, older.ArtifactID)
	}

	// A key reviewing only tin-crew: metals-crew is denied, legal and an
	// unknown workarea are missing, unknown fields and wrong types refused.
	narrow := s.issueKey(t, "reviewer-tin", "dreamer")
	s.grant(t, narrow.KeyID, "universe.procurement", "reader", "allow")
	s.grant(t, narrow.KeyID, "universe.procurement.tin-crew", "dreamer.review", "allow")
	for name, c := range map[string]struct {
		body   any
		status int
		code   string
	}{
		"not reviewed there": {map[string]any{"workarea": tm.crew.ID}, 403, "access.denied"},
		"not visible":        {map[string]any{"workarea": "universe.legal"}, 404, "access.not_found"},
		"unknown":            {map[string]any{"workarea": "universe.nowhere"}, 404, "access.not_found"},
		"unknown field":      {map[string]any{"workareas": tin.ID}, 400, "request.validation"},
		"wrong type":         {map[string]any{"workarea": 7}, 400, "request.validation"},
	} {
		if r := serveIn(narrow.Token, c.body); r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", name, r.Status, r.Body, c.status, c.code)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM admission.serves WHERE reviewer_key_id = $1`, narrow.KeyID); n != 0 {
		t.Fatalf("refused serves leased %d items", n)
	}
}
