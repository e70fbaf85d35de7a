package e2e

import (
	"fmt"
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
		"a NUL":              {map[string]any{"workarea": "universe\x00procurement"}, 400, "request.validation"},
	} {
		if r := serveIn(narrow.Token, c.body); r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", name, r.Status, r.Body, c.status, c.code)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM admission.serves WHERE reviewer_key_id = $1`, narrow.KeyID); n != 0 {
		t.Fatalf("refused serves leased %d items", n)
	}
}

type reviewQueue struct {
	Workareas []struct {
		Workarea string `json:"workarea"`
		Path     string `json:"path"`
		Claims   int    `json:"claims"`
		Edges    int    `json:"edges"`
		Leased   int    `json:"leased"`
		Oldest   string `json:"oldest"`
	} `json:"workareas"`
	Claims int `json:"claims"`
	Edges  int `json:"edges"`
}

// GET /v1/reviews/queue counts, per workarea the key reviews and oldest
// first, the held items its principal did not write and the pending edges
// it did not propose; leased ones are counted apart. Nothing else's.
func TestReviewQueue(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	tin := s.createWorkarea(t, "universe.procurement", "tin-crew", "--status", "committed")
	s.grant(t, tm.writer.KeyID, "universe.procurement", "dreamer.propose", "allow")
	writer := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	for i, w := range []string{tm.crew.ID, tm.crew.ID, tin.ID} {
		toolJSON[remembered](t, writer, "oml_remember", map[string]any{"workarea": w, "claim_key": fmt.Sprintf("w-%d", i), "text": fmt.Sprintf("Fact %d from writer one.", i)})
	}
	toolJSON[remembered](t, s.mcpSession(t, tm.author2.Token, "2025-11-25"), "oml_remember", map[string]any{"workarea": tin.ID, "claim_key": "a2", "text": "Fact from writer two."})
	toolJSON[map[string]any](t, writer, "oml_relate_propose", map[string]any{"kind": "workarea", "label": "continues", "from": tin.ID, "to": tm.crew.ID})

	q := decode[reviewQueue](t, s.do(t, "GET", "/v1/reviews/queue", tm.reviewer.Token, nil), 200)
	if q.Claims != 4 || q.Edges != 1 || len(q.Workareas) != 2 {
		t.Fatalf("reviewer's queue: %+v", q)
	}
	if w := q.Workareas[0]; w.Workarea != tm.crew.ID || w.Path != "universe.procurement.metals-crew" || w.Claims != 2 || w.Edges != 0 || w.Leased != 0 {
		t.Fatalf("oldest first, metals-crew: %+v", q.Workareas)
	}
	if w := q.Workareas[1]; w.Workarea != tin.ID || w.Claims != 2 || w.Edges != 1 {
		t.Fatalf("tin-crew: %+v", q.Workareas)
	}
	// The writer is not counted its own items nor its own edge.
	q = decode[reviewQueue](t, s.do(t, "GET", "/v1/reviews/queue", tm.writer.Token, nil), 200)
	if q.Claims != 1 || q.Edges != 0 || len(q.Workareas) != 1 || q.Workareas[0].Workarea != tin.ID {
		t.Fatalf("writer's queue: %+v", q)
	}
	// A serve leases the oldest item: still waiting, now leased.
	if _, ok := s.serve(t, tm.reviewer.Token); !ok {
		t.Fatal("nothing served")
	}
	q = decode[reviewQueue](t, s.do(t, "GET", "/v1/reviews/queue", tm.author2.Token, nil), 200)
	if q.Claims != 3 || q.Workareas[0].Leased != 1 {
		t.Fatalf("after a serve: %+v", q)
	}
	// No dreamer.review: refused; another tenant sees none of ours.
	if r := s.do(t, "GET", "/v1/reviews/queue", tm.reader.Token, nil); r.Status != 403 || r.code() != "access.denied" {
		t.Fatalf("a reader's queue: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "GET", "/v1/reviews/queue", s.bootstrapTenant(t, "globex"), nil); r.Status == 200 {
		if q := decode[reviewQueue](t, r, 200); q.Claims != 0 || q.Edges != 0 {
			t.Fatalf("another tenant's queue: %+v", q)
		}
	}
}

// POST /v1/reviews/{serve_id}/release gives a serve back: the item (claim
// or edge) returns to the queue at once; the serve takes no verdict after.
// Only the served key may release; others' and unknown serves are missing.
func TestServeRelease(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	s.grant(t, tm.writer.KeyID, "universe.procurement", "dreamer.propose", "allow")
	q1 := s.createWorkarea(t, "universe.procurement", "q1-2027")
	writer := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	got := toolJSON[remembered](t, writer, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "k", "text": "Zinc is 2,700 USD/t."})
	release := func(key, id string) reply { t.Helper(); return s.do(t, "POST", "/v1/reviews/"+id+"/release", key, nil) }

	srv, ok := s.serve(t, tm.reviewer.Token)
	if !ok || srv.Item.ArtifactID != got.ArtifactID {
		t.Fatalf("serve: %v %+v", ok, srv)
	}
	for name, r := range map[string]reply{
		"another reviewer's serve": release(tm.author2.Token, srv.ServeID),
		"an unknown serve":         release(tm.reviewer.Token, "srv_nope"),
		"another tenant's key":     release(s.bootstrapTenant(t, "globex"), srv.ServeID),
	} {
		if r.Status != 404 || r.code() != "access.not_found" {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	if r := s.do(t, "POST", "/v1/reviews/"+srv.ServeID+"/release", tm.reviewer.Token, map[string]any{"why": "x"}); r.Status != 400 {
		t.Fatalf("unknown field: %d %s", r.Status, r.Body)
	}
	if r := release(tm.reviewer.Token, srv.ServeID); r.Status != 200 {
		t.Fatalf("release: %d %s", r.Status, r.Body)
	}
	if r := release(tm.reviewer.Token, srv.ServeID); r.code() != "review.serve_consumed" {
		t.Fatalf("a second release: %d %s", r.Status, r.Body)
	}
	if r := s.verdict(t, tm.reviewer.Token, srv.ServeID, "approve"); r.code() != "review.serve_consumed" {
		t.Fatalf("a verdict on a released serve: %d %s", r.Status, r.Body)
	}
	if n := s.count(t, `SELECT count(*) FROM admission.artifacts WHERE id = $1 AND state = 'held' AND leased_until IS NULL AND approvals = 0`, got.ArtifactID); n != 1 {
		t.Fatal("the released item is not back in the queue unchanged")
	}
	// Another reviewer is served it at once, and judges it.
	again, ok := s.serve(t, tm.author2.Token)
	if !ok || again.Item.ArtifactID != got.ArtifactID {
		t.Fatalf("after the release: %v %+v", ok, again)
	}
	decode[map[string]any](t, s.verdict(t, tm.author2.Token, again.ServeID, "approve"), 200)

	// An edge goes back the same way.
	toolJSON[map[string]any](t, writer, "oml_relate_propose", map[string]any{"kind": "workarea", "label": "continues", "from": q1.ID, "to": tm.crew.ID})
	edgeServe := func(key string) string {
		t.Helper()
		r := s.do(t, "POST", "/v1/reviews/serve", key, nil)
		return decode[struct {
			ServeID string `json:"serve_id"`
			Subject string `json:"subject"`
		}](t, r, 200).ServeID
	}
	first := edgeServe(tm.reviewer.Token)
	if r := s.do(t, "POST", "/v1/reviews/serve", tm.author2.Token, nil); r.Status != 204 {
		t.Fatalf("a leased edge served twice: %d %s", r.Status, r.Body)
	}
	if r := release(tm.reviewer.Token, first); r.Status != 200 {
		t.Fatalf("release the edge: %d %s", r.Status, r.Body)
	}
	second := edgeServe(tm.author2.Token)
	if r := s.verdict(t, tm.author2.Token, second, "approve"); r.Status != 200 {
		t.Fatalf("verdict on the re-served edge: %d %s", r.Status, r.Body)
	}
	// The release is in the journal, seen by its actor.
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE event_type = 'review.release'`); n != 2 {
		t.Fatalf("%d release events, want 2", n)
	}
}
