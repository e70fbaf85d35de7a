package e2e

import (
	"encoding/json"
	"slices"
	"testing"
)

type graphOut struct {
	Claims []struct {
		ArtifactID string `json:"artifact_id"`
		State      string `json:"state"`
	} `json:"claims"`
	Edges []struct {
		Kind  string `json:"kind"`
		From  string `json:"from"`
		To    string `json:"to"`
		State string `json:"state"`
		Label string `json:"label"`
	} `json:"edges"`
	Truncated bool `json:"truncated"`
}

func (g graphOut) claimIDs() []string {
	var out []string
	for _, c := range g.Claims {
		out = append(out, c.ArtifactID)
	}
	slices.Sort(out)
	return out
}

// promote submits a claim as author and has reviewer ratify it.
func (tm team) promote(t testing.TB, author, reviewer issuedKey, workarea, key, text string, derives ...string) string {
	t.Helper()
	s := tm.s
	body := map[string]any{"workarea": workarea, "claim_key": key, "text": text}
	verb := "remember"
	if len(derives) > 0 {
		body["derives_from"], verb = derives, "learn"
	}
	body["verb"] = verb
	got := decode[remembered](t, s.do(t, "POST", "/v1/memories", author.Token, body), 201)
	srv, ok := s.serve(t, reviewer.Token)
	if !ok || srv.Item.ArtifactID != got.ArtifactID {
		t.Fatalf("serve %s: %v %+v", key, ok, srv)
	}
	decode[map[string]any](t, s.verdict(t, reviewer.Token, srv.ServeID, "approve"), 200)
	return got.ArtifactID
}

func TestWorkareaEdgeRatifiedByAnother(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	q1 := s.createWorkarea(t, "universe.procurement", "q1-2027")
	s.grant(t, tm.writer.KeyID, "universe.procurement", "dreamer.propose", "allow")
	cs := s.mcpSession(t, tm.writer.Token, "2026-07-28")

	for name, args := range map[string]map[string]any{
		"closed label":  {"kind": "workarea", "label": "inspired_by", "from": tm.crew.ID, "to": q1.ID},
		"self-edge":     {"kind": "workarea", "label": "continues", "from": tm.crew.ID, "to": tm.crew.ID},
		"unknown kind":  {"kind": "person", "label": "continues", "from": tm.crew.ID, "to": q1.ID},
		"unknown field": {"kind": "workarea", "label": "continues", "from": tm.crew.ID, "to": q1.ID, "weight": 3},
	} {
		if code, body := toolError(t, cs, "oml_relate_propose", args); code != "request.validation" {
			t.Errorf("%s: %s %s", name, code, body)
		}
	}
	if code, _ := toolError(t, cs, "oml_relate_propose", map[string]any{"kind": "workarea", "label": "continues", "from": tm.crew.ID, "to": "universe"}); code != "access.not_found" {
		t.Errorf("unreadable endpoint: %s", code)
	}
	// The reviewer holds no dreamer.propose.
	if code, _ := toolError(t, s.mcpSession(t, tm.reviewer.Token, "2025-11-25"), "oml_relate_propose",
		map[string]any{"kind": "workarea", "label": "continues", "from": tm.crew.ID, "to": q1.ID}); code != "access.denied" {
		t.Errorf("propose without dreamer.propose: %s", code)
	}

	e := toolJSON[struct {
		EdgeID   string `json:"edge_id"`
		State    string `json:"state"`
		Awaiting string `json:"awaiting"`
	}](t, cs, "oml_relate_propose", map[string]any{"kind": "workarea", "label": "continues", "from": tm.crew.ID, "to": q1.ID, "note": "Q1 continues Q4"})
	if e.State != "pending" || e.Awaiting == "" {
		t.Fatalf("propose: %+v", e)
	}
	if code, _ := toolError(t, cs, "oml_relate_propose", map[string]any{"kind": "workarea", "label": "continues", "from": tm.crew.ID, "to": q1.ID}); code != "edge.exists" {
		t.Fatalf("duplicate proposal: %s", code)
	}
	// The proposer is never served its own edge.
	if r := s.do(t, "POST", "/v1/reviews/serve", tm.writer.Token, nil); r.Status != 204 {
		t.Fatalf("proposer served its own edge: %d %s", r.Status, r.Body)
	}
	r := s.do(t, "POST", "/v1/reviews/serve", tm.reviewer.Token, nil)
	srv := decode[struct {
		ServeID string `json:"serve_id"`
		Subject string `json:"subject"`
		Edge    struct {
			EdgeID string `json:"edge_id"`
		} `json:"edge"`
	}](t, r, 200)
	if srv.Subject != "edge" || srv.Edge.EdgeID != e.EdgeID {
		t.Fatalf("serve: %s", r.Body)
	}
	v := decode[struct {
		State string `json:"state"`
	}](t, s.verdict(t, tm.reviewer.Token, srv.ServeID, "approve"), 200)
	if v.State != "ratified" {
		t.Fatalf("verdict: %+v", v)
	}
	info := decode[struct {
		Edges []struct {
			Label string `json:"label"`
			To    string `json:"to"`
			State string `json:"state"`
		} `json:"edges"`
	}](t, s.do(t, "GET", "/v1/workareas/"+tm.crew.ID, tm.reader.Token, nil), 200)
	if len(info.Edges) != 1 || info.Edges[0].To != q1.ID || info.Edges[0].State != "ratified" {
		t.Fatalf("edges in workarea info: %+v", info.Edges)
	}
	// A reader who cannot read the far end does not see the edge at all.
	s.grant(t, tm.reader.KeyID, q1.ID, "reader", "deny")
	info.Edges = nil
	if r := s.do(t, "GET", "/v1/workareas/"+tm.crew.ID, tm.reader.Token, nil); json.Unmarshal(r.Body, &info) != nil || len(info.Edges) != 0 {
		t.Fatalf("edge to an unreadable workarea shown: %s", r.Body)
	}
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE event_type IN ('workarea.relate_proposed', 'workarea.relate_ratified')`); n != 2 {
		t.Fatalf("%d edge events", n)
	}
}

func TestGraphIsScopedAndHonest(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	hidden := s.createWorkarea(t, "universe.procurement", "hidden")
	s.grant(t, tm.reader.KeyID, hidden.ID, "reader", "deny")
	s.grant(t, tm.writer.KeyID, "universe.procurement", "dreamer.propose", "allow")

	a := tm.promote(t, tm.reviewer, tm.author2, tm.crew.ID, "a", "Quotes for Q4.")
	b := tm.promote(t, tm.writer, tm.author2, tm.crew.ID, "b", "Derived from a.", a)
	far := tm.promote(t, tm.writer, tm.author2, hidden.ID, "far", "In a subtree the reader cannot read.", a)
	// author2 writes c from a; it stays held.
	c := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.author2.Token,
		map[string]any{"verb": "learn", "workarea": tm.crew.ID, "claim_key": "c", "text": "Held.", "derives_from": []string{a}}), 201)
	toolJSON[map[string]any](t, s.mcpSession(t, tm.writer.Token, "2025-11-25"), "oml_relate_propose",
		map[string]any{"kind": "claim", "label": "supports", "from": b, "to": a})

	rc := s.mcpSession(t, tm.reader.Token, "2025-11-25")
	g := toolJSON[graphOut](t, rc, "oml_graph", map[string]any{"scope": "universe.procurement", "roots": []string{a}, "depth": 2})
	if got, want := g.claimIDs(), sorted(a, b); !slices.Equal(got, want) || g.Truncated {
		t.Fatalf("reader's claims %v, want %v (held and unreadable absent)", got, want)
	}
	var derives, connections, toFar, toHeld int
	for _, e := range g.Edges {
		switch {
		case e.From == c.ArtifactID || e.To == c.ArtifactID:
			toHeld++
		case e.From == far || e.To == far:
			toFar++
		case e.Kind == "derives_from":
			derives++
		case e.Kind == "connection" && e.State == "pending" && e.Label == "supports":
			connections++
		}
	}
	if derives != 1 || connections != 1 || toFar != 1 || toHeld != 0 {
		t.Fatalf("reader's edges %+v", g.Edges)
	}
	// The author of the held claim sees it in its own graph.
	own := toolJSON[graphOut](t, s.mcpSession(t, tm.author2.Token, "2025-11-25"), "oml_graph",
		map[string]any{"scope": tm.crew.ID, "roots": []string{a}, "depth": 1})
	if !slices.Contains(own.claimIDs(), c.ArtifactID) {
		t.Fatalf("author's own held claim missing: %v", own.claimIDs())
	}
	// Ceilings are refused, not truncated silently.
	for _, args := range []map[string]any{
		{"scope": tm.crew.ID, "depth": 6},
		{"scope": tm.crew.ID, "limit": 501},
	} {
		if code, _ := toolError(t, rc, "oml_graph", args); code != "limit.ceiling" {
			t.Fatalf("%v: %s", args, code)
		}
	}
	small := toolJSON[graphOut](t, rc, "oml_graph", map[string]any{"scope": tm.crew.ID, "roots": []string{a}, "limit": 1})
	if len(small.Claims) != 1 || !small.Truncated {
		t.Fatalf("limit 1: %+v", small)
	}
	if code, _ := toolError(t, rc, "oml_graph", map[string]any{"scope": hidden.ID}); code != "access.not_found" {
		t.Fatalf("unreadable scope: %s", code)
	}
	// Default roots: the scope's newest readable claims.
	def := toolJSON[graphOut](t, rc, "oml_graph", map[string]any{"scope": tm.crew.ID})
	if !slices.Equal(def.claimIDs(), sorted(a, b)) {
		t.Fatalf("default roots: %v", def.claimIDs())
	}
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}
