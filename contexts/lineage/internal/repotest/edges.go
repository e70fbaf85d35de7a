package repotest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/lineage/internal/app"
	"github.com/omlhub/oml/contexts/lineage/internal/domain"
	"github.com/omlhub/oml/platform/ids"
)

// reviewer holds dreamer.review on wa_u.wa_p, minus wa_u.wa_p.wa_secret.
var reviewer = app.Subtrees{Allow: []string{"wa_u.wa_p"}, Deny: []string{"wa_u.wa_p.wa_secret"}}

func lease(t *testing.T, s Store) {
	ctx := context.Background()
	tenant := ids.New(ids.Tenant)
	a := arts(8)
	insert := func(from, to int, at time.Duration, edit func(*domain.Edge)) domain.Edge {
		e := claimEdge(tenant, a[from], a[to], "supports", now.Add(at))
		if edit != nil {
			edit(&e)
		}
		must(t, s.Repo.EdgeInsert(ctx, e))
		return e
	}
	// Not for this reviewer: its own principal's proposal, an endpoint
	// outside its subtrees, one inside a denied subtree, a decided edge.
	insert(0, 1, -4*time.Hour, func(e *domain.Edge) { e.ProposerPrincipal = "pr_rev" })
	insert(1, 2, -3*time.Hour, func(e *domain.Edge) { e.ToIDPath = "wa_u.wa_x" })
	insert(2, 3, -3*time.Hour, func(e *domain.Edge) { e.FromIDPath = "wa_u.wa_p.wa_secret.wa_deep" })
	done := insert(3, 4, -3*time.Hour, nil)
	done.State, done.DecidedAt = domain.Ratified, &now
	must(t, s.Repo.EdgeDecide(ctx, done, "key_rev"))
	// Eligible, the older one first; a path below the allowed one counts.
	newer := insert(5, 6, -1*time.Hour, nil)
	older := insert(6, 7, -2*time.Hour, func(e *domain.Edge) { e.ToIDPath = "wa_u.wa_p.wa_crew" })

	next := func(at time.Time) (domain.Edge, error) {
		var e domain.Edge
		err := s.Tx.InTx(ctx, func(ctx context.Context) error {
			var err error
			e, err = s.Repo.EdgeNextForReview(ctx, tenant, "pr_rev", reviewer, nil, at, at.Add(10*time.Minute))
			return err
		})
		return e, err
	}
	for _, c := range []struct {
		name string
		at   time.Time
		want string // "" is ErrNotFound
	}{
		{"oldest first", now, older.ID},
		{"a leased edge is skipped", now, newer.ID},
		{"nothing left", now.Add(time.Minute), ""},
		{"an expired lease frees the edge", now.Add(11 * time.Minute), older.ID},
	} {
		got, err := next(c.at)
		if c.want == "" {
			if !errors.Is(err, app.ErrNotFound) {
				t.Fatalf("%s: %+v, %v, want ErrNotFound", c.name, got, err)
			}
			continue
		}
		must(t, err)
		if got.ID != c.want || got.LeasedUntil == nil || !got.LeasedUntil.Equal(c.at.Add(10*time.Minute)) {
			t.Fatalf("%s: leased %s until %v, want %s", c.name, got.ID, got.LeasedUntil, c.want)
		}
		stored, err := s.Repo.EdgeGetForUpdate(ctx, tenant, got.ID)
		must(t, err)
		if stored.LeasedUntil == nil || !stored.LeasedUntil.Equal(*got.LeasedUntil) {
			t.Fatalf("%s: stored lease %v, want %v", c.name, stored.LeasedUntil, got.LeasedUntil)
		}
	}
}

// concurrentLeases runs reviewers in overlapping units of work: each
// leases, then waits until all have asked before committing, so a lease
// that did not skip a locked edge would hand one edge out twice.
func concurrentLeases(t *testing.T, s Store) {
	ctx := context.Background()
	tenant := ids.New(ids.Tenant)
	a := arts(4)
	for i := range 3 {
		must(t, s.Repo.EdgeInsert(ctx, claimEdge(tenant, a[i], a[i+1], "supports", now.Add(time.Duration(i)*time.Second))))
	}
	const reviewers = 8
	var asked, wg sync.WaitGroup
	asked.Add(reviewers)
	got := make([]string, reviewers)
	for i := range reviewers {
		wg.Go(func() {
			err := s.Tx.InTx(ctx, func(ctx context.Context) error {
				e, err := s.Repo.EdgeNextForReview(ctx, tenant, "pr_rev", reviewer, nil, now, now.Add(time.Minute))
				asked.Done()
				if !waitOrTimeout(&asked, 5*time.Second) {
					t.Error("a reviewer blocked on an edge another one holds, instead of skipping it (SKIP LOCKED)")
				}
				if errors.Is(err, app.ErrNotFound) {
					return nil
				}
				got[i] = e.ID
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	leased := slices.DeleteFunc(got, func(id string) bool { return id == "" })
	slices.Sort(leased)
	if len(leased) != 3 || len(slices.Compact(slices.Clone(leased))) != 3 {
		t.Fatalf("leased %v, want each of the 3 edges exactly once", leased)
	}
}

// waitOrTimeout waits for wg and reports whether it finished within d (a
// lease that blocks on a locked row instead of skipping it never lets it).
func waitOrTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

func decide(t *testing.T, s Store) {
	ctx := context.Background()
	tenant := ids.New(ids.Tenant)
	a := arts(3)
	wa := func(from, to string) domain.Edge {
		e := claimEdge(tenant, from, to, "relates_to", now)
		e.ID, e.Kind = ids.New(ids.WorkareaEdge), domain.KindWorkarea
		return e
	}
	ok, no := wa("wa_1", "wa_2"), wa("wa_1", "wa_3")
	must(t, s.Repo.EdgeInsert(ctx, ok))
	must(t, s.Repo.EdgeInsert(ctx, no))
	ce := claimEdge(tenant, a[0], a[1], "supports", now)
	must(t, s.Repo.EdgeInsert(ctx, ce))
	must(t, s.Tx.InTx(ctx, func(ctx context.Context) error {
		_, err := s.Repo.EdgeNextForReview(ctx, tenant, "pr_rev", reviewer, nil, now, now.Add(time.Minute))
		return err
	}))
	later := now.Add(time.Minute)
	for _, d := range []struct {
		e       domain.Edge
		approve bool
	}{{ok, true}, {no, false}, {ce, false}} {
		must(t, s.Tx.InTx(ctx, func(ctx context.Context) error {
			e, err := s.Repo.EdgeGetForUpdate(ctx, tenant, d.e.ID)
			if err != nil {
				return err
			}
			if err := e.Decide(d.approve, later); err != nil {
				return err
			}
			return s.Repo.EdgeDecide(ctx, e, "key_rev")
		}))
	}
	for _, c := range []struct {
		e    domain.Edge
		want domain.State
	}{{ok, domain.Ratified}, {no, domain.Rejected}, {ce, domain.Rejected}} {
		got, err := s.Repo.EdgeGetForUpdate(ctx, tenant, c.e.ID)
		must(t, err)
		if got.State != c.want || got.DecidedAt == nil || !got.DecidedAt.Equal(later) || got.LeasedUntil != nil {
			t.Fatalf("decided edge = %+v, want %s at %v with no lease", got, c.want, later)
		}
	}
	live, err := s.Repo.WorkareaEdgesFrom(ctx, tenant, "wa_1")
	must(t, err)
	if len(live) != 1 || live[0].ID != ok.ID {
		t.Fatalf("WorkareaEdgesFrom = %+v, want only the ratified edge", live)
	}
	if got, err := s.Repo.ClaimEdgesTouching(ctx, tenant, []string{a[0]}); err != nil || len(got) != 0 {
		t.Fatalf("a rejected claim edge still touches: %+v, %v", got, err)
	}
	if _, err := s.Repo.EdgeNextForReview(ctx, tenant, "pr_rev", reviewer, nil, later.Add(time.Hour), later.Add(2*time.Hour)); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("a decided edge is served again: %v", err)
	}
}

func touching(t *testing.T, s Store) {
	ctx := context.Background()
	tenant := ids.New(ids.Tenant)
	a := arts(5)
	slices.Sort(a)
	must(t, s.Repo.Declare(ctx, tenant, a[3], []string{a[1], a[0]}, now))
	must(t, s.Repo.Declare(ctx, tenant, a[2], []string{a[1]}, now))
	must(t, s.Repo.Declare(ctx, tenant, a[4], []string{a[3]}, now)) // touches none of the ids below
	ders, err := s.Repo.DerivationsTouching(ctx, tenant, []string{a[1], a[0]})
	must(t, err)
	want := []app.Derivation{{From: a[2], To: a[1]}, {From: a[3], To: a[0]}, {From: a[3], To: a[1]}}
	if !slices.Equal(ders, want) {
		t.Fatalf("DerivationsTouching = %v, want %v in order", ders, want)
	}
	// Edge ids are given out of order; the answer is ordered by id.
	for i, id := range []string{"ce_03", "ce_01", "ce_02"} {
		e := claimEdge(tenant, a[i], a[i+1], "supports", now)
		e.ID = id
		must(t, s.Repo.EdgeInsert(ctx, e))
	}
	got, err := s.Repo.ClaimEdgesTouching(ctx, tenant, []string{a[1]})
	must(t, err)
	if len(got) != 2 || got[0].ID != "ce_01" || got[1].ID != "ce_03" {
		t.Fatalf("ClaimEdgesTouching = %+v, want ce_01 then ce_03", got)
	}
	if got, err := s.Repo.ClaimEdgesTouching(ctx, ids.New(ids.Tenant), []string{a[1]}); err != nil || len(got) != 0 {
		t.Fatalf("edges of another tenant: %+v, %v", got, err)
	}
}

// queueCounts counts what a reviewer could be served, per from-endpoint
// workarea, with the leased edges among them.
func queueCounts(t *testing.T, s Store) {
	ctx := context.Background()
	tenant := ids.New(ids.Tenant)
	a := arts(8)
	insert := func(from, to int, at time.Duration, edit func(*domain.Edge)) domain.Edge {
		e := claimEdge(tenant, a[from], a[to], "supports", now.Add(at))
		if edit != nil {
			edit(&e)
		}
		must(t, s.Repo.EdgeInsert(ctx, e))
		return e
	}
	insert(0, 1, -4*time.Hour, func(e *domain.Edge) { e.ProposerPrincipal = "pr_rev" })       // its own
	insert(1, 2, -3*time.Hour, func(e *domain.Edge) { e.ToIDPath = "wa_u.wa_x" })             // outside
	insert(2, 3, -3*time.Hour, func(e *domain.Edge) { e.FromIDPath = "wa_u.wa_p.wa_secret" }) // denied
	older := insert(3, 4, -2*time.Hour, nil)
	insert(4, 5, -1*time.Hour, nil)
	crew := insert(5, 6, -5*time.Hour, func(e *domain.Edge) { e.FromIDPath = "wa_u.wa_p.wa_crew" })
	must(t, s.Tx.InTx(ctx, func(ctx context.Context) error {
		_, err := s.Repo.EdgeNextForReview(ctx, tenant, "pr_rev", reviewer, nil, now, now.Add(time.Minute))
		return err
	}))
	counts, err := s.Repo.EdgesQueueCounts(ctx, tenant, "pr_rev", reviewer, now)
	must(t, err)
	slices.SortFunc(counts, func(x, y app.QueueCount) int { return x.Oldest.Compare(y.Oldest) })
	pFrom, _ := older.Workareas()
	crewFrom, _ := crew.Workareas()
	want := []app.QueueCount{
		{WorkareaID: crewFrom, Waiting: 1, Leased: 1, Oldest: crew.ProposedAt}, // the oldest, leased above
		{WorkareaID: pFrom, Waiting: 2, Leased: 0, Oldest: older.ProposedAt},
	}
	if len(counts) != len(want) {
		t.Fatalf("counts %+v, want %+v", counts, want)
	}
	for i := range want {
		if c := counts[i]; c.WorkareaID != want[i].WorkareaID || c.Waiting != want[i].Waiting || c.Leased != want[i].Leased || !c.Oldest.Equal(want[i].Oldest) {
			t.Fatalf("counts[%d] = %+v, want %+v", i, c, want[i])
		}
	}
	// A released lease frees the edge: still waiting, no longer leased.
	// Only its own lease: a stale release leaves a newer lease alone.
	must(t, s.Repo.EdgeLeaseClear(ctx, tenant, crew.ID, now))
	if stored, err := s.Repo.EdgeGetForUpdate(ctx, tenant, crew.ID); err != nil || stored.LeasedUntil == nil {
		t.Fatalf("a release with another lease cleared it: %+v %v", stored, err)
	}
	must(t, s.Repo.EdgeLeaseClear(ctx, tenant, crew.ID, now.Add(time.Minute)))
	stored, err := s.Repo.EdgeGetForUpdate(ctx, tenant, crew.ID)
	must(t, err)
	if stored.LeasedUntil != nil || stored.State != domain.Pending {
		t.Fatalf("after the release: %+v", stored)
	}
	counts, err = s.Repo.EdgesQueueCounts(ctx, tenant, "pr_rev", reviewer, now)
	must(t, err)
	for _, c := range counts {
		if c.Leased != 0 {
			t.Fatalf("after the release: %+v", counts)
		}
	}
}
