package e2e

import (
	"fmt"
	"testing"
)

// chain submits n held claims in workarea, each deriving from the one
// before, the first from root; it returns the last.
func (tm team) chain(t testing.TB, author issuedKey, workarea, root string, n int) string {
	t.Helper()
	prev := root
	for i := range n {
		got := decode[remembered](t, tm.s.do(t, "POST", "/v1/memories", author.Token, map[string]any{
			"verb": "learn", "workarea": workarea, "claim_key": fmt.Sprintf("link-%d", i),
			"text": fmt.Sprintf("link %d of a long chain", i), "derives_from": []string{prev},
		}), 201)
		prev = got.ArtifactID
	}
	return prev
}

// deepTeam is a team whose reviewer wrote a promoted claim that the writer
// then derives a long chain from, in an archive nobody may review (so the
// chain itself never enters a queue).
func deepTeam(t testing.TB, s *server, links int) (tm team, archive workareaInfo, tip string) {
	t.Helper()
	tm = newTeam(t, s)
	archive = s.createWorkarea(t, "universe.procurement", "archive")
	for _, k := range []issuedKey{tm.writer, tm.author2, tm.reviewer} {
		s.grant(t, k.KeyID, archive.ID, "dreamer.review", "deny")
	}
	own := tm.promote(t, tm.reviewer, tm.author2, tm.crew.ID, "reviewers-own", "The reviewer's own finding.")
	return tm, archive, tm.chain(t, tm.writer, archive.ID, own, links)
}

// R2 holds over the whole closure: a reviewer who wrote an ancestor 1,050
// links up is never served the descendant (the closure used to be cut at
// 1,024 rows), and an independent reviewer is.
func TestIndependenceOverDeepLineage(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm, _, tip := deepTeam(t, s, 1050)
	item := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{
		"verb": "learn", "workarea": tm.crew.ID, "claim_key": "conclusion", "text": "The conclusion of the chain.",
		"derives_from": []string{tip},
	}), 201)
	if srv, ok := s.serve(t, tm.reviewer.Token); ok {
		t.Fatalf("the author of an ancestor 1,051 links up was served %s", srv.Item.ArtifactID)
	}
	srv, ok := s.serve(t, tm.author2.Token)
	if !ok || srv.Item.ArtifactID != item.ArtifactID {
		t.Fatalf("independent reviewer: %v %+v", ok, srv)
	}
	if n := len(srv.Item.Lineage); n != 1051 {
		t.Errorf("closure checked: %d artifacts, want 1051", n)
	}
}

// A closure larger than OML_REVIEW_CLOSURE_MAX is never served, to anyone:
// the serve says why (review.closure_bound) when nothing else is servable,
// and the item expires at once (fail closed), so it does not hold the head
// of the queue.
func TestClosureOverTheBoundIsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_REVIEW_CLOSURE_MAX=20")
	tm, _, tip := deepTeam(t, s, 25)
	deep := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{
		"verb": "learn", "workarea": tm.crew.ID, "claim_key": "conclusion", "text": "Too deep to check.",
		"derives_from": []string{tip},
	}), 201)
	if r := s.do(t, "POST", "/v1/reviews/serve", tm.author2.Token, nil); r.Status != 422 || r.code() != "review.closure_bound" {
		t.Fatalf("serve over the bound: %d %s", r.Status, r.Body)
	}
	mine := decode[struct {
		Items []struct {
			ArtifactID string `json:"artifact_id"`
			State      string `json:"state"`
		} `json:"items"`
	}](t, s.do(t, "GET", "/v1/memories/mine?workarea="+tm.crew.ID, tm.writer.Token, nil), 200)
	if len(mine.Items) == 0 || mine.Items[0].ArtifactID != deep.ArtifactID || mine.Items[0].State != "expired" {
		t.Fatalf("the unreviewable item is not expired for its author: %+v", mine.Items)
	}
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE event_type = 'lifecycle.expire' AND payload->>'reason' = 'closure_bound'`); n != 1 {
		t.Fatalf("closure_bound expiries journalled: %d", n)
	}
	if srv, ok := s.serve(t, tm.reviewer.Token); ok {
		t.Fatalf("an expired item was served: %+v", srv)
	}
	// A shallow item next to it is still served.
	shallow := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{
		"workarea": tm.crew.ID, "claim_key": "shallow", "text": "Nothing behind it.",
	}), 201)
	if srv, ok := s.serve(t, tm.author2.Token); !ok || srv.Item.ArtifactID != shallow.ArtifactID {
		t.Fatalf("shallow item: %v %+v", ok, srv)
	}
}

// A verdict re-checks what the serve checked: each change between serve
// and verdict refuses the verdict with its rule, and nothing is promoted.
func TestVerdictRechecks(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	s.grant(t, tm.writer.KeyID, "universe.procurement", "dreamer.propose", "allow")
	own := tm.promote(t, tm.reviewer, tm.author2, tm.crew.ID, "reviewers-own", "The reviewer's own finding.")

	// serveOne submits an item in workarea as the writer and serves it to
	// the reviewer.
	n := 0
	serveOne := func(t *testing.T, workarea string, reviewer issuedKey) (string, served) {
		t.Helper()
		n++
		got := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{
			"workarea": workarea, "claim_key": fmt.Sprintf("item-%d", n), "text": fmt.Sprintf("Item %d.", n),
		}), 201)
		srv, ok := s.serve(t, reviewer.Token)
		if !ok || srv.Item.ArtifactID != got.ArtifactID {
			t.Fatalf("serve: %v %+v", ok, srv)
		}
		return got.ArtifactID, srv
	}
	refused := func(t *testing.T, key issuedKey, srv served, artifact string, status int, code string) {
		t.Helper()
		if r := s.verdict(t, key.Token, srv.ServeID, "approve"); r.Status != status || r.code() != code {
			t.Fatalf("verdict: %d %s, want %d %s", r.Status, r.Body, status, code)
		}
		if n := s.count(t, `SELECT count(*) FROM admission.artifacts WHERE id = $1 AND state = 'held'`, artifact); n != 1 {
			t.Fatalf("%s left held: %d", artifact, n)
		}
		if n := s.count(t, `SELECT count(*) FROM retrieval.entries WHERE artifact_id = $1`, artifact); n != 0 {
			t.Fatalf("%s reached recall", artifact)
		}
	}

	t.Run("claim edge from the reviewer's claim", func(t *testing.T) {
		item, srv := serveOne(t, tm.crew.ID, tm.reviewer)
		// Pending counts as ratified does; the edge points at the item.
		decode[map[string]any](t, s.do(t, "POST", "/v1/edges", tm.writer.Token, map[string]any{
			"kind": "claim", "label": "supports", "from": own, "to": item,
		}), 201)
		refused(t, tm.reviewer, srv, item, 403, "review.not_independent")
	})
	t.Run("claim edge to the reviewer's claim", func(t *testing.T) {
		item, srv := serveOne(t, tm.crew.ID, tm.reviewer)
		decode[map[string]any](t, s.do(t, "POST", "/v1/edges", tm.writer.Token, map[string]any{
			"kind": "claim", "label": "cites", "from": item, "to": own,
		}), 201)
		refused(t, tm.reviewer, srv, item, 403, "review.not_independent")
	})
	t.Run("grant removed", func(t *testing.T) {
		third := s.issueKey(t, "reviewer-3", "dreamer")
		s.grant(t, third.KeyID, tm.crew.ID, "dreamer.review", "allow")
		item, srv := serveOne(t, tm.crew.ID, third)
		var grant string
		s.scan(t, `SELECT id FROM access.grants WHERE key_id = '`+third.KeyID+`'`, &grant)
		if r := s.do(t, "DELETE", "/v1/grants/"+grant, s.AdminKey, nil); r.Status != 200 && r.Status != 204 {
			t.Fatalf("remove grant: %d %s", r.Status, r.Body)
		}
		refused(t, third, srv, item, 403, "access.denied")
	})
	t.Run("grant denied", func(t *testing.T) {
		item, srv := serveOne(t, tm.crew.ID, tm.author2)
		s.grant(t, tm.author2.KeyID, tm.crew.ID, "dreamer.review", "deny")
		refused(t, tm.author2, srv, item, 403, "access.denied")
	})
	t.Run("workarea validated", func(t *testing.T) {
		w := s.createWorkarea(t, "universe.procurement", "frozen-soon", "--status", "committed")
		item, srv := serveOne(t, w.ID, tm.reviewer)
		if r := s.do(t, "PATCH", "/v1/workareas/"+w.ID, s.AdminKey, map[string]any{"status": "validated"}); r.Status != 200 {
			t.Fatalf("validate: %d %s", r.Status, r.Body)
		}
		refused(t, tm.reviewer, srv, item, 409, "workarea.frozen")
	})
	t.Run("edge between workareas, one validated since", func(t *testing.T) {
		a := s.createWorkarea(t, "universe.procurement", "edge-a", "--status", "committed")
		b := s.createWorkarea(t, "universe.procurement", "edge-b", "--status", "committed")
		e := decode[struct {
			EdgeID string `json:"edge_id"`
		}](t, s.do(t, "POST", "/v1/edges", tm.writer.Token, map[string]any{"kind": "workarea", "label": "relates_to", "from": a.ID, "to": b.ID}), 201)
		// Every held item is leased by now, so the edge is what is served.
		r := s.do(t, "POST", "/v1/reviews/serve", tm.author2.Token, nil)
		srv := decode[struct {
			ServeID string `json:"serve_id"`
			Edge    struct {
				EdgeID string `json:"edge_id"`
			} `json:"edge"`
		}](t, r, 200)
		if srv.Edge.EdgeID != e.EdgeID {
			t.Fatalf("serve: %s", r.Body)
		}
		if r := s.do(t, "PATCH", "/v1/workareas/"+b.ID, s.AdminKey, map[string]any{"status": "validated"}); r.Status != 200 {
			t.Fatalf("validate: %d %s", r.Status, r.Body)
		}
		if r := s.verdict(t, tm.author2.Token, srv.ServeID, "approve"); r.Status != 409 || r.code() != "workarea.frozen" {
			t.Fatalf("edge verdict into a validated workarea: %d %s", r.Status, r.Body)
		}
		if n := s.count(t, `SELECT count(*) FROM lineage.edges WHERE id = $1 AND state = 'pending'`, e.EdgeID); n != 1 {
			t.Fatal("the refused verdict changed the edge")
		}
	})
	t.Run("self-signed review switched off", func(t *testing.T) {
		dev := s.createWorkarea(t, "universe.procurement", "sandbox", "--status", "development")
		if r := s.do(t, "PUT", "/v1/review-settings", s.AdminKey, `{"self_signed_development":true}`); r.Status != 200 {
			t.Fatalf("settings: %d %s", r.Status, r.Body)
		}
		item, srv := serveOne(t, dev.ID, tm.writer)
		if !srv.SelfSigned {
			t.Fatalf("own item in development not marked self-signed: %+v", srv)
		}
		if r := s.do(t, "PUT", "/v1/review-settings", s.AdminKey, `{"self_signed_development":false}`); r.Status != 200 {
			t.Fatalf("settings: %d %s", r.Status, r.Body)
		}
		refused(t, tm.writer, srv, item, 403, "review.not_independent")
	})
	t.Run("development workarea committed", func(t *testing.T) {
		dev := s.createWorkarea(t, "universe.procurement", "sandbox-2", "--status", "development")
		if r := s.do(t, "PUT", "/v1/review-settings", s.AdminKey, `{"self_signed_development":true}`); r.Status != 200 {
			t.Fatalf("settings: %d %s", r.Status, r.Body)
		}
		item, srv := serveOne(t, dev.ID, tm.writer)
		if r := s.do(t, "PATCH", "/v1/workareas/"+dev.ID, s.AdminKey, map[string]any{"status": "committed"}); r.Status != 200 {
			t.Fatalf("commit: %d %s", r.Status, r.Body)
		}
		refused(t, tm.writer, srv, item, 403, "review.not_independent")
	})
}
