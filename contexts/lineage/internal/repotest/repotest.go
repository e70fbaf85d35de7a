// Package repotest is the contract suite every lineage app.Repository
// passes: the in-memory fake and the Postgres adapter run the same cases.
package repotest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/lineage/internal/app"
	"github.com/omlhub/oml/contexts/lineage/internal/domain"
	"github.com/omlhub/oml/platform/ids"
)

// Store is one repository under test with the unit of work it runs in.
type Store struct {
	Repo app.Repository
	Tx   app.Transactor
}

// Run runs the suite; newStore returns an empty store for one test.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"declare and parents", declare},
		{"closure", closure},
		{"closure limit", closureLimit},
		{"edge insert and conflict", edgeInsert},
		{"lease for review", lease},
		{"concurrent leases never share an edge", concurrentLeases},
		{"decide", decide},
		{"touching order", touching},
		{"queue counts", queueCounts},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { t.Parallel(); c.fn(t, newStore(t)) })
	}
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func arts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = ids.New(ids.Artifact)
	}
	return out
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(sorted(got), sorted(want)) {
		t.Fatalf("%s = %v, want %v (any order)", what, got, want)
	}
}

// claimEdge returns a pending claim edge from → to, proposed at.
func claimEdge(tenant, from, to, label string, at time.Time) domain.Edge {
	return domain.Edge{
		ID: ids.New(ids.ClaimEdge), TenantID: tenant, Kind: domain.KindClaim, Label: label,
		From: from, To: to, FromIDPath: "wa_u.wa_p", ToIDPath: "wa_u.wa_p", State: domain.Pending,
		ProposerKeyID: "key_alice", ProposerPrincipal: "pr_alice", ProposedAt: at,
	}
}

func declare(t *testing.T, s Store) {
	ctx := context.Background()
	tenant, other := ids.New(ids.Tenant), ids.New(ids.Tenant)
	a := arts(3)
	must(t, s.Repo.Declare(ctx, tenant, a[0], []string{a[2], a[1]}, now))
	must(t, s.Repo.Declare(ctx, tenant, a[0], []string{a[1]}, now)) // a repeat is a no-op
	got, err := s.Repo.Parents(ctx, tenant, a[0])
	must(t, err)
	if !slices.Equal(got, sorted(a[1:])) {
		t.Fatalf("Parents = %v, want %v in order", got, sorted(a[1:]))
	}
	if got, err := s.Repo.Parents(ctx, other, a[0]); err != nil || len(got) != 0 {
		t.Fatalf("Parents in another tenant = %v, %v", got, err)
	}
}

func closure(t *testing.T, s Store) {
	ctx := context.Background()
	tenant := ids.New(ids.Tenant)
	a := arts(9)
	// A chain with a cycle: 0 → 1 → 2 → 0; 2 → 3.
	must(t, s.Repo.Declare(ctx, tenant, a[0], []string{a[1]}, now))
	must(t, s.Repo.Declare(ctx, tenant, a[1], []string{a[2]}, now))
	must(t, s.Repo.Declare(ctx, tenant, a[2], []string{a[0], a[3]}, now))
	// Claim edges: 3 → 4 is walked from 3; 5 → 1 counts for 1 itself (an
	// edge into the item counts as one from it) but not for what derives
	// from 1. A ratified edge counts like a pending one, a rejected one not
	// at all.
	must(t, s.Repo.EdgeInsert(ctx, claimEdge(tenant, a[3], a[4], "supports", now)))
	in := claimEdge(tenant, a[5], a[1], "cites", now)
	must(t, s.Repo.EdgeInsert(ctx, in))
	in.State, in.DecidedAt = domain.Ratified, &now
	must(t, s.Repo.EdgeDecide(ctx, in, "key_rev"))
	rej := claimEdge(tenant, a[6], a[2], "cites", now)
	must(t, s.Repo.EdgeInsert(ctx, rej))
	rej.State, rej.DecidedAt = domain.Rejected, &now
	must(t, s.Repo.EdgeDecide(ctx, rej, "key_rev"))
	// Descendants are not ancestors: 7 derives from 0.
	must(t, s.Repo.Declare(ctx, tenant, a[7], []string{a[0]}, now))
	// Workarea edges never join a closure.
	we := claimEdge(tenant, a[0], a[8], "relates_to", now)
	we.ID, we.Kind = ids.New(ids.WorkareaEdge), domain.KindWorkarea
	must(t, s.Repo.EdgeInsert(ctx, we))

	for _, c := range []struct {
		name     string
		artifact string
		want     []string
	}{
		{"cycle and outgoing edges", a[0], []string{a[1], a[2], a[3], a[4]}},
		{"an edge into the item", a[1], []string{a[0], a[2], a[3], a[4], a[5]}},
		{"from inside the cycle", a[2], []string{a[0], a[1], a[3], a[4]}},
		{"an edge's far end walks back", a[4], []string{a[3]}},
		{"rejected edge excluded", a[6], []string{}},
		{"descendant", a[7], []string{a[0], a[1], a[2], a[3], a[4]}},
		{"unknown", ids.New(ids.Artifact), []string{}},
	} {
		got, err := s.Repo.Closure(ctx, tenant, c.artifact, 100)
		must(t, err)
		sameSet(t, c.name, got, c.want)
	}
	if got, err := s.Repo.Closure(ctx, ids.New(ids.Tenant), a[0], 100); err != nil || len(got) != 0 {
		t.Fatalf("closure in another tenant = %v, %v", got, err)
	}
	// Many roots at once: each root's own closure, and a count of them all.
	roots := []string{a[0], a[1], a[4], a[6]}
	all, n, err := s.Repo.Closures(ctx, tenant, roots, 100)
	must(t, err)
	total := 0
	for _, r := range roots {
		one, err := s.Repo.Closure(ctx, tenant, r, 100)
		must(t, err)
		sameSet(t, "Closures of "+r, all[r], one)
		total += len(one)
	}
	if n != total {
		t.Fatalf("Closures counted %d members, the closures hold %d", n, total)
	}
	if _, n, err := s.Repo.Closures(ctx, tenant, roots, 3); err != nil || n != 3 {
		t.Fatalf("Closures capped at 3 = %d members, %v", n, err)
	}
}

func closureLimit(t *testing.T, s Store) {
	ctx := context.Background()
	tenant := ids.New(ids.Tenant)
	a := arts(6)
	for i := range 5 {
		must(t, s.Repo.Declare(ctx, tenant, a[i], []string{a[i+1]}, now))
	}
	for _, c := range []struct {
		name  string
		limit int
		want  int
	}{
		{"below", 3, 3},
		{"exact", 5, 5},
		{"above", 6, 5},
	} {
		got, err := s.Repo.Closure(ctx, tenant, a[0], c.limit)
		must(t, err)
		if len(got) != c.want {
			t.Fatalf("%s: closure with limit %d = %d rows, want %d", c.name, c.limit, len(got), c.want)
		}
		for _, id := range got {
			if !slices.Contains(a[1:], id) {
				t.Fatalf("%s: closure returned %s, not an ancestor", c.name, id)
			}
		}
	}
}

func edgeInsert(t *testing.T, s Store) {
	ctx := context.Background()
	tenant := ids.New(ids.Tenant)
	a := arts(2)
	e := claimEdge(tenant, a[0], a[1], "supports", now)
	e.Note = "because"
	must(t, s.Repo.EdgeInsert(ctx, e))
	got, err := s.Repo.EdgeGetForUpdate(ctx, tenant, e.ID)
	must(t, err)
	if got.ID != e.ID || got.Kind != e.Kind || got.Label != e.Label || got.From != e.From || got.To != e.To ||
		got.FromIDPath != e.FromIDPath || got.ToIDPath != e.ToIDPath || got.Note != "because" || got.State != domain.Pending ||
		got.ProposerKeyID != e.ProposerKeyID || got.ProposerPrincipal != e.ProposerPrincipal ||
		!got.ProposedAt.Equal(now) || got.DecidedAt != nil || got.LeasedUntil != nil {
		t.Fatalf("stored edge = %+v, want %+v", got, e)
	}
	if _, err := s.Repo.EdgeGetForUpdate(ctx, ids.New(ids.Tenant), e.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("edge from another tenant: %v, want ErrNotFound", err)
	}
	for _, c := range []struct {
		name     string
		from, to string
		label    string
		conflict bool
	}{
		{"same from, to and label", a[0], a[1], "supports", true},
		{"another label", a[0], a[1], "cites", false},
		{"the reverse direction", a[1], a[0], "supports", false},
	} {
		err := s.Repo.EdgeInsert(ctx, claimEdge(tenant, c.from, c.to, c.label, now))
		if c.conflict != errors.Is(err, app.ErrConflict) || (!c.conflict && err != nil) {
			t.Fatalf("%s: %v, want conflict %v", c.name, err, c.conflict)
		}
	}
	// Once rejected, the same proposal may be made again.
	e.State, e.DecidedAt = domain.Rejected, &now
	must(t, s.Repo.EdgeDecide(ctx, e, "key_rev"))
	must(t, s.Repo.EdgeInsert(ctx, claimEdge(tenant, a[0], a[1], "supports", now)))
}
