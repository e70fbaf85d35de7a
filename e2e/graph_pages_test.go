package e2e

import (
	"fmt"
	"net/url"
	"slices"
	"testing"
)

// A truncated graph answer continues through next_cursor: the pages hold
// every claim and edge once, a cursor fits only its own query, and every
// page is in the read log like a recall.
func TestGraphPagesAndReadLog(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	root := tm.promote(t, tm.writer, tm.reviewer, tm.crew.ID, "root", "The root finding.")
	want := []string{root}
	for i := range 11 {
		want = append(want, tm.promote(t, tm.writer, tm.reviewer, tm.crew.ID, fmt.Sprintf("child-%d", i), fmt.Sprintf("Child %d.", i), root))
	}
	slices.Sort(want)

	type page struct {
		graphOut
		NextCursor *string `json:"next_cursor"`
	}
	get := func(cursor string, limit int) reply {
		q := url.Values{"scope": {tm.crew.ID}, "roots": {root}, "depth": {"1"}, "limit": {fmt.Sprint(limit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		return s.do(t, "GET", "/v1/graph?"+q.Encode(), tm.reader.Token, nil)
	}
	var claims []string
	edges := map[string]int{}
	cursor, pages := "", 0
	for {
		p := decode[page](t, get(cursor, 5), 200)
		pages++
		claims = append(claims, p.claimIDs()...)
		for _, e := range p.Edges {
			edges[e.Kind+" "+e.From+" "+e.To]++
		}
		if p.Truncated != (p.NextCursor != nil) {
			t.Fatalf("page %d: truncated %v with next_cursor %v", pages, p.Truncated, p.NextCursor)
		}
		if p.NextCursor == nil {
			break
		}
		if pages > 5 {
			t.Fatal("the cursor does not advance")
		}
		cursor = *p.NextCursor
	}
	slices.Sort(claims)
	if pages != 3 || !slices.Equal(claims, want) {
		t.Fatalf("%d pages held %v, want 3 pages holding %v", pages, claims, want)
	}
	if len(edges) != 11 {
		t.Fatalf("edges over the pages: %v, want the 11 derivations", edges)
	}
	for e, n := range edges {
		if n != 1 {
			t.Errorf("edge %s served %d times", e, n)
		}
	}
	// A cursor continues only the query that returned it.
	first := decode[page](t, get("", 5), 200)
	if r := get(*first.NextCursor, 6); r.Status != 400 || r.code() != "request.validation" {
		t.Fatalf("cursor on another query: %d %s", r.Status, r.Body)
	}
	if r := get("bm90IGEgY3Vyc29y", 5); r.Status != 400 || r.code() != "request.validation" {
		t.Fatalf("forged cursor: %d %s", r.Status, r.Body)
	}
	// And over MCP.
	cs := s.mcpSession(t, tm.reader.Token, "2025-11-25")
	mp := toolJSON[page](t, cs, "oml_graph", map[string]any{"scope": tm.crew.ID, "roots": []string{root}, "depth": 1, "limit": 5, "cursor": *first.NextCursor})
	if len(mp.Claims) != 5 || mp.NextCursor == nil {
		t.Fatalf("second page over MCP: %+v", mp)
	}

	// pages + the first page again + the MCP page: each logged with what it
	// returned; the refused ones are not.
	if n := s.count(t, `SELECT count(*) FROM retrieval.read_log WHERE operation = 'graph' AND key_id = $1`, tm.reader.KeyID); n != int64(pages+2) {
		t.Fatalf("graph reads logged: %d, want %d", n, pages+2)
	}
	if n := s.count(t, `SELECT count(*) FROM retrieval.read_log WHERE operation = 'graph' AND cardinality(returned) = 5`); n < 3 {
		t.Fatalf("logged graph pages with their claims: %d", n)
	}
}
