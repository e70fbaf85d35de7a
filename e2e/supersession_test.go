package e2e

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A version has at most one successor, and recall returns one version of
// a claim: the newest promoted one. The graph still shows the chain.
func TestSupersessionSingleSuccessor(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	recalled := func(t *testing.T) []string {
		t.Helper()
		return decode[recallOut](t, s.do(t, "POST", "/v1/recall", tm.reader.Token,
			map[string]any{"query": "aluminium quote Accra", "scope": tm.crew.ID, "k": 10}), 200).hitIDs()
	}
	supersede := func(prev, text string) reply {
		return s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{"workarea": tm.crew.ID, "supersedes": prev, "text": text})
	}
	approveNext := func(t *testing.T, want string) {
		t.Helper()
		srv, ok := s.serve(t, tm.reviewer.Token)
		if !ok || srv.Item.ArtifactID != want {
			t.Fatalf("serve: %v %+v, want %s", ok, srv, want)
		}
		decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, srv.ServeID, "approve"), 200)
	}

	v1 := tm.promote(t, tm.writer, tm.reviewer, tm.crew.ID, "quote", "Accra Metals aluminium quote: 412 USD/t.")
	v2 := decode[remembered](t, supersede(v1, "Accra Metals aluminium quote: 405 USD/t."), 201)
	// A second successor of v1, held or promoted, forks the claim: refused.
	if r := supersede(v1, "Accra Metals aluminium quote: 399 USD/t."); r.Status != 409 || r.code() != "submission.successor_exists" {
		t.Fatalf("second successor: %d %s", r.Status, r.Body)
	}
	if got := recalled(t); !slices.Equal(got, []string{v1}) {
		t.Fatalf("before v2 is promoted, recall = %v, want [v1]", got)
	}
	approveNext(t, v2.ArtifactID)
	if got := recalled(t); !slices.Equal(got, []string{v2.ArtifactID}) {
		t.Fatalf("after v2 is promoted, recall = %v, want [v2] only", got)
	}
	g := decode[graphOut](t, s.do(t, "GET", "/v1/graph?scope="+tm.crew.ID+"&roots="+v2.ArtifactID, tm.reader.Token, nil), 200)
	if !slices.Contains(g.claimIDs(), v1) || !hasEdge(g, "supersedes", v2.ArtifactID, v1) {
		t.Fatalf("graph lost the chain: %+v", g)
	}

	// Twenty concurrent supersessions of v2: one wins, the rest are typed
	// conflicts, and the claim has three versions.
	const racers = 20
	var wg sync.WaitGroup
	statuses := make([]reply, racers)
	for i := range racers {
		wg.Go(func() { statuses[i] = supersede(v2.ArtifactID, "Accra Metals aluminium quote: 401 USD/t.") })
	}
	wg.Wait()
	won := 0
	for _, r := range statuses {
		switch {
		case r.Status == http.StatusCreated:
			won++
		case r.Status != 409 || r.code() != "submission.successor_exists":
			t.Errorf("racing supersession: %d %s", r.Status, r.Body)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent supersessions of one version won, want 1", won, racers)
	}
	if n := s.count(t, `SELECT count(*) FROM admission.artifacts WHERE claim_key = 'quote'`); n != 3 {
		t.Fatalf("versions of the claim: %d, want 3", n)
	}
}

// An older version promoted after a newer one stays out of recall.
func TestOlderVersionPromotedLate(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	w1 := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token,
		map[string]any{"workarea": tm.crew.ID, "claim_key": "price", "text": "Copper cathode price: 9,100 USD/t."}), 201)
	w2 := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token,
		map[string]any{"workarea": tm.crew.ID, "supersedes": w1.ArtifactID, "text": "Copper cathode price: 9,250 USD/t."}), 201)
	first, ok := s.serve(t, tm.reviewer.Token)
	if !ok || first.Item.ArtifactID != w1.ArtifactID {
		t.Fatalf("serve w1: %v %+v", ok, first)
	}
	second, ok := s.serve(t, tm.author2.Token)
	if !ok || second.Item.ArtifactID != w2.ArtifactID {
		t.Fatalf("serve w2: %v %+v", ok, second)
	}
	decode[map[string]any](t, s.verdict(t, tm.author2.Token, second.ServeID, "approve"), 200)
	decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, first.ServeID, "approve"), 200)
	got := decode[recallOut](t, s.do(t, "POST", "/v1/recall", tm.reader.Token,
		map[string]any{"query": "copper cathode price", "scope": tm.crew.ID}), 200).hitIDs()
	if !slices.Equal(got, []string{w2.ArtifactID}) {
		t.Fatalf("recall = %v, want only the newer version %s", got, w2.ArtifactID)
	}
}

func hasEdge(g graphOut, kind, from, to string) bool {
	for _, e := range g.Edges {
		if e.Kind == kind && e.From == from && e.To == to {
			return true
		}
	}
	return false
}

// A claim never forks through a rejected intermediate: a new version goes
// on top of the newest held or promoted one.
func TestNoForkThroughRejectedVersion(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	supersede := func(prev, text string) reply {
		return s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{"workarea": tm.crew.ID, "supersedes": prev, "text": text})
	}
	v1 := tm.promote(t, tm.writer, tm.reviewer, tm.crew.ID, "fork", "Tin price: 25,000 USD/t.")
	v2 := decode[remembered](t, supersede(v1, "Tin price: 25,500 USD/t."), 201)
	v3 := decode[remembered](t, supersede(v2.ArtifactID, "Tin price: 26,000 USD/t."), 201)
	srv, ok := s.serve(t, tm.reviewer.Token)
	if !ok || srv.Item.ArtifactID != v2.ArtifactID {
		t.Fatalf("serve v2: %v %+v", ok, srv)
	}
	decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, srv.ServeID, "reject"), 200)
	// v2 is rejected, which frees v1's successor slot, but v3 is the head.
	r := supersede(v1, "Tin price: 24,000 USD/t.")
	if r.Status != 409 || r.code() != "submission.successor_exists" || !strings.Contains(string(r.Body), v3.ArtifactID) {
		t.Fatalf("superseding past the newest version: %d %s", r.Status, r.Body)
	}
	if v4 := decode[remembered](t, supersede(v3.ArtifactID, "Tin price: 24,000 USD/t."), 201); v4.Version != 4 {
		t.Fatalf("on top of the head: %+v", v4)
	}
}
