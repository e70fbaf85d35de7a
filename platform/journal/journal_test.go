package journal_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

func appendOne(t *testing.T, ctx context.Context, db *pg.DB, j *journal.Journal, tenant string, e journal.Event) journal.Appended {
	t.Helper()
	var a journal.Appended
	err := db.InTx(ctx, func(ctx context.Context) error {
		var err error
		a, err = j.Append(ctx, tenant, e)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Many goroutines on two separate pools append to one tenant at once: seq
// stays gap-free and every link holds.
func TestConcurrentAppendsChainVerifies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.NewURL(t)
	var pools []*pg.DB
	for range 2 {
		db, err := pg.Open(ctx, u, pg.Options{MaxConns: 8})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		pools = append(pools, db)
	}
	const writers, each = 16, 40
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := range writers {
		db := pools[w%2]
		j := journal.New(db, nil)
		wg.Go(func() {
			for i := range each {
				err := db.InTx(ctx, func(ctx context.Context) error {
					_, err := j.Append(ctx, "tn_a", journal.Event{
						Type: "test.append", Actor: fmt.Sprintf("writer-%d", w),
						Subject: map[string]any{"i": i}, Payload: map[string]any{"w": w, "note": "ünïcode ✓", "ratio": 0.1 * float64(i)},
					})
					return err
				})
				if err != nil {
					errc <- err
					return
				}
			}
		})
	}
	// Another tenant's chain is independent.
	appendOne(t, ctx, pools[0], journal.New(pools[0], nil), "tn_b", journal.Event{Type: "test.other", Actor: "x"})
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	rep, err := journal.New(pools[0], nil).Verify(ctx, "tn_a")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Events != writers*each || rep.HeadSeq != writers*each {
		t.Fatalf("report = %+v, want ok with %d events", rep, writers*each)
	}
	var gaps int
	err = pools[0].Pool.QueryRow(ctx, `SELECT count(*) FROM (
		SELECT seq - lag(seq) OVER (ORDER BY seq) AS d FROM platform.journal_events WHERE tenant_id = 'tn_a') x
		WHERE d <> 1`).Scan(&gaps)
	if err != nil || gaps != 0 {
		t.Fatalf("gaps = %d, err = %v", gaps, err)
	}
	if rep, _ := journal.New(pools[0], nil).Verify(ctx, "tn_b"); !rep.OK || rep.Events != 1 {
		t.Fatalf("tenant b: %+v", rep)
	}
}

// Editing one stored event breaks verification at exactly that event.
func TestVerifyNamesTamperedEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	j := journal.New(db, nil)
	var fifth journal.Appended
	for i := 1; i <= 8; i++ {
		a := appendOne(t, ctx, db, j, "tn_t", journal.Event{Type: "test.e", Actor: "k", Payload: map[string]any{"i": i}})
		if i == 5 {
			fifth = a
		}
	}
	if rep, err := j.Verify(ctx, "tn_t"); err != nil || !rep.OK {
		t.Fatalf("before tampering: %+v, %v", rep, err)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE platform.journal_events SET payload = '{"i": 50}' WHERE tenant_id = 'tn_t' AND seq = 5`); err != nil {
		t.Fatal(err)
	}
	rep, err := j.Verify(ctx, "tn_t")
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.BadSeq != 5 || rep.BadID != fifth.ID {
		t.Fatalf("after tampering: %+v, want bad seq 5 (%s)", rep, fifth.ID)
	}

	// Deleting an event is a gap.
	if _, err := db.Pool.Exec(ctx, `UPDATE platform.journal_events SET payload = '{"i": 5}' WHERE tenant_id = 'tn_t' AND seq = 5;
		DELETE FROM platform.journal_events WHERE tenant_id = 'tn_t' AND seq = 3`); err != nil {
		t.Fatal(err)
	}
	if rep, _ := j.Verify(ctx, "tn_t"); rep.OK || rep.BadSeq != 4 {
		t.Fatalf("after deleting seq 3: %+v, want bad seq 4", rep)
	}
}

func TestAppendNeedsUnitOfWork(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	if _, err := journal.New(db, nil).Append(context.Background(), "tn", journal.Event{Type: "x"}); err == nil {
		t.Fatal("Append outside a transaction succeeded")
	}
}

func TestRollbackLeavesNoEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	j := journal.New(db, nil)
	appendOne(t, ctx, db, j, "tn_r", journal.Event{Type: "kept", Actor: "k"})
	_ = db.InTx(ctx, func(ctx context.Context) error {
		if _, err := j.Append(ctx, "tn_r", journal.Event{Type: "lost", Actor: "k"}); err != nil {
			t.Fatal(err)
		}
		return fmt.Errorf("abort")
	})
	a := appendOne(t, ctx, db, j, "tn_r", journal.Event{Type: "kept", Actor: "k"})
	if a.Seq != 2 {
		t.Fatalf("seq after a rolled-back append = %d, want 2", a.Seq)
	}
	if rep, _ := j.Verify(ctx, "tn_r"); !rep.OK || rep.Events != 2 {
		t.Fatalf("%+v", rep)
	}
}

// Verification while appends go on sees one consistent snapshot.
func TestVerifyDuringWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	j := journal.New(db, nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = db.InTx(ctx, func(ctx context.Context) error {
					_, err := j.Append(ctx, "tn_v", journal.Event{Type: "test.w", Actor: "k"})
					return err
				})
			}
		})
	}
	for range 30 {
		rep, err := j.Verify(ctx, "tn_v")
		if err != nil || !rep.OK {
			close(stop)
			wg.Wait()
			t.Fatalf("verify during writes: %+v, %v", rep, err)
		}
	}
	close(stop)
	wg.Wait()
}
