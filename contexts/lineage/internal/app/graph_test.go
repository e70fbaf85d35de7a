package app_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/omlhub/oml/contexts/lineage/internal/app"
	"github.com/omlhub/oml/platform/errs"
	platformids "github.com/omlhub/oml/platform/ids"
)

// chain adds n readable claims in P, each deriving from the next.
func chain(t *testing.T, b bundle, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = platformids.New(platformids.Artifact)
		b.claim(ids[i], "u.p", app.Readable)
	}
	for i := range n - 1 {
		if err := b.svc.Declare(b.ctx, tenant, ids[i], []string{ids[i+1]}, now); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

func claimIDs(g app.Graph) []string {
	var out []string
	for _, c := range g.Claims {
		out = append(out, c.ID)
	}
	return out
}

func TestGraphPaging(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ids := chain(t, b, 7)
	q := app.GraphQuery{Scope: "P", Roots: []string{ids[0]}, Depth: 5, Limit: 2}
	var pages [][]string
	var edges int
	for {
		g, err := b.svc.Graph(b.ctx, q)
		if err != nil {
			t.Fatalf("page %d: %v", len(pages)+1, err)
		}
		pages = append(pages, claimIDs(g))
		edges += len(g.Edges)
		if g.Truncated != (g.NextCursor != "") {
			t.Fatalf("page %d: truncated %v with cursor %q", len(pages), g.Truncated, g.NextCursor)
		}
		if !g.Truncated {
			break
		}
		q.Cursor = g.NextCursor
	}
	// Depth 5 from art_00 reaches art_05; the pages continue each other.
	want := [][]string{ids[0:2], ids[2:4], ids[4:6]}
	if !slices.EqualFunc(pages, want, slices.Equal) {
		t.Fatalf("pages = %v, want %v", pages, want)
	}
	if edges != 5 {
		t.Fatalf("the pages carry %d edges, want the 5 derivations between the claims served", edges)
	}
	// Every page is logged like a recall, each as its own query.
	if len(b.reads.reads) != len(pages) {
		t.Fatalf("%d reads logged for %d pages", len(b.reads.reads), len(pages))
	}
	for i, r := range b.reads.reads {
		if !slices.Equal(r.Returned, pages[i]) || r.KeyID != "key_alice" || r.WorkareaID != "wa_p" || r.TenantID != tenant {
			t.Fatalf("read %d = %+v, want page %v", i, r, pages[i])
		}
		if i > 0 && bytes.Equal(r.QuerySHA256, b.reads.reads[i-1].QuerySHA256) {
			t.Fatalf("pages %d and %d logged with one query digest", i-1, i)
		}
	}
}

func TestGraphRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ids := chain(t, b, 4)
	first, err := b.svc.Graph(b.ctx, app.GraphQuery{Scope: "P", Roots: ids[:1], Depth: 3, Limit: 2})
	if err != nil || first.NextCursor == "" {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	logged := len(b.reads.reads)
	for _, c := range []struct {
		name string
		q    app.GraphQuery
		want errs.Code
	}{
		{"cursor of another limit", app.GraphQuery{Scope: "P", Roots: ids[:1], Depth: 3, Limit: 3, Cursor: first.NextCursor}, errs.Validation},
		{"cursor of other roots", app.GraphQuery{Scope: "P", Roots: ids[1:2], Depth: 3, Limit: 2, Cursor: first.NextCursor}, errs.Validation},
		{"cursor of another scope", app.GraphQuery{Scope: "R", Roots: ids[:1], Depth: 3, Limit: 2, Cursor: first.NextCursor}, errs.Validation},
		{"a cursor never returned", app.GraphQuery{Scope: "P", Roots: ids[:1], Depth: 3, Limit: 2, Cursor: "bm9wZQ"}, errs.Validation},
		{"depth above the ceiling", app.GraphQuery{Scope: "P", Depth: 6}, errs.LimitCeiling},
		{"limit above the ceiling", app.GraphQuery{Scope: "P", Limit: 501}, errs.LimitCeiling},
		{"a root that is no artifact", app.GraphQuery{Scope: "P", Roots: []string{"wa_p"}}, errs.Validation},
		{"unreadable scope", app.GraphQuery{Scope: "S"}, errs.NotFound},
		{"unknown scope", app.GraphQuery{Scope: "nowhere"}, errs.NotFound},
	} {
		if _, err := b.svc.Graph(b.ctx, c.q); !errs.Is(err, c.want) {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
	if len(b.reads.reads) != logged {
		t.Fatalf("refused reads were logged: %d, want %d", len(b.reads.reads), logged)
	}
}

// A claim the caller may not see is absent with its edges (R3); one it
// may see but not read shows its id only, on the edge.
func TestGraphVisibility(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root, held, bodyless, elsewhere := platformids.New(platformids.Artifact), platformids.New(platformids.Artifact),
		platformids.New(platformids.Artifact), platformids.New(platformids.Artifact)
	b.claim(root, "u.p", app.Readable)
	b.claim(held, "u.p", app.Absent)
	b.claim(bodyless, "u.s", app.BodyLess)
	b.claim(elsewhere, "u.r", app.Readable) // readable, outside the scope
	if err := b.svc.Declare(b.ctx, tenant, root, []string{held, bodyless, elsewhere}, now); err != nil {
		t.Fatal(err)
	}
	g, err := b.svc.Graph(b.ctx, app.GraphQuery{Scope: "P", Roots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	if got := claimIDs(g); !slices.Equal(got, []string{root}) {
		t.Fatalf("claims = %v, want only the root", got)
	}
	var far []string
	for _, e := range g.Edges {
		far = append(far, e.To)
	}
	slices.Sort(far)
	want := []string{bodyless, elsewhere}
	slices.Sort(want)
	if !slices.Equal(far, want) {
		t.Fatalf("edges reach %v, want the body-less and out-of-scope ids, never the held one", far)
	}
}
