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
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/pgtest"
	"github.com/omlhub/oml/platform/scope"
)

// Concurrent drains by one principal (two keys, several replicas) deliver
// each resolution of its items exactly once, and nothing of another's.
func TestAttentionDrainDeliversOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	repo := postgres.New(db)
	j := journal.New(db, nil)
	now := time.Now().UTC().Truncate(time.Microsecond)
	const mine = 30
	err := db.InTx(ctx, func(ctx context.Context) error {
		for i := range mine + 5 {
			exp := now.Add(-time.Second)
			asker := "pr_a"
			if i >= mine {
				asker = "pr_b"
			}
			it := domain.Item{TenantID: "tn_n", ID: fmt.Sprintf("ev_%02d", i), Kind: domain.KindQuestion, WorkareaID: "wa_1", IDPath: "r.wa_1",
				AskerKeyID: "key_" + asker, AskerPrincipalID: asker, AskerPrincipal: asker, Body: "?", CreatedAt: now.Add(-time.Minute),
				ExpiresAt: &exp, Status: domain.Open, Seq: int64(i + 1)}
			if err := repo.ItemInsert(ctx, it); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := func() *app.Service {
		r := postgres.New(db)
		return &app.Service{Access: readsAll{}, Journal: j, Repo: r, Notices: r, Tx: db, Now: func() time.Time { return now }}
	}
	if n, err := svc().Sweep(ctx, "", 1000); err != nil || n != mine+5 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[string]int{}
	)
	for r := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := auth.With(ctx, auth.Caller{TenantID: "tn_n", KeyID: fmt.Sprintf("key_a%d", r%2), PrincipalID: "pr_a", Principal: "a", Role: "writer"})
			for range 3 {
				ps, err := svc().Drain(c)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, p := range ps {
					seen[p.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != mine {
		t.Fatalf("%d distinct items delivered, want %d", len(seen), mine)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s delivered %d times", id, n)
		}
	}
}

// readsAll grants the caller read on every workarea it is asked about.
type readsAll struct{}

func (readsAll) Fence(context.Context) (scope.Fence, error) { return nil, nil }

func (readsAll) Workarea(_ context.Context, ref string) (app.Workarea, error) {
	return app.Workarea{ID: ref, IDPath: "r." + ref, Reader: true}, nil
}

func (readsAll) WorkareasByIDs(_ context.Context, ids []string) (map[string]app.Workarea, error) {
	out := map[string]app.Workarea{}
	for _, id := range ids {
		out[id] = app.Workarea{ID: id, IDPath: "r." + id, Reader: true}
	}
	return out, nil
}
