package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/contexts/inbox/internal/postgres"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/pgtest"
)

// Two replicas sweeping at once resolve every due item exactly once, as
// the hub, each with one answer event: SKIP LOCKED plus the open-status
// guard. Items not yet due are left open.
func TestSweepResolvesOnceAcrossConcurrentSweepers(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	repo := postgres.New(db)
	j := journal.New(db, nil)
	now := time.Now().UTC().Truncate(time.Microsecond)
	const due = 40
	err := db.InTx(ctx, func(ctx context.Context) error {
		for i := range due + 5 {
			exp := now.Add(-time.Second)
			if i >= due {
				exp = now.Add(time.Hour)
			}
			kind, onExpiry := domain.KindApproval, "approve"
			if i%2 == 0 {
				kind, onExpiry = domain.KindQuestion, ""
			}
			it := domain.Item{TenantID: "tn_sweep", ID: fmt.Sprintf("ev_%02d", i), Kind: kind, WorkareaID: "wa_1", IDPath: "r.wa_1",
				AskerKeyID: "key_a", AskerPrincipalID: "pr_a", AskerPrincipal: "agent-a", Body: "due?", CreatedAt: now.Add(-time.Minute),
				ExpiresAt: &exp, OnExpiry: onExpiry, Status: domain.Open, Seq: int64(i + 1)}
			if err := repo.ItemInsert(ctx, it); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	newSvc := func() *app.Service {
		return &app.Service{Journal: j, Repo: postgres.New(db), Tx: db, Now: func() time.Time { return now }}
	}
	var wg sync.WaitGroup
	counts := make([]int, 2)
	errs := make([]error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[r], errs[r] = newSvc().Sweep(ctx, "", 1000)
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if counts[0]+counts[1] != due {
		t.Fatalf("the sweepers resolved %d + %d items, want %d in all", counts[0], counts[1], due)
	}
	events, err := j.After(ctx, "tn_sweep", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != due {
		t.Fatalf("%d answer events, want %d", len(events), due)
	}
	for i := range due + 5 {
		it, err := repo.ItemGet(ctx, "tn_sweep", fmt.Sprintf("ev_%02d", i))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i >= due && it.Status != domain.Open:
			t.Fatalf("an item not yet due was resolved: %+v", it)
		case i < due && (!it.Expired || it.ResolvedBy != domain.Hub || it.Status != it.ExpiryOutcome()):
			t.Fatalf("a due item: %+v", it)
		}
	}
	// A human decision after the deadline is a conflict even before a sweep.
	late := domain.Item{Kind: domain.KindApproval, Status: domain.Open, ExpiresAt: &now}
	if err := late.CanDecide(now); err == nil {
		t.Fatal("a decision at the deadline was accepted")
	}
}
