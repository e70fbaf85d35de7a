package journal_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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

// chain reads tenant's first events and lists their types, in seq order.
func chain(t *testing.T, j *journal.Journal, tenant string) ([]journal.Stored, string) {
	t.Helper()
	evs, err := j.After(context.Background(), tenant, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	types := make([]string, len(evs))
	for i, e := range evs {
		types[i] = e.Type
	}
	return evs, strings.Join(types, ",")
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
				// Most writers leave their events pending for the
				// sequencer; every fourth chains its own at once.
				err := db.InTx(ctx, func(ctx context.Context) error {
					e := journal.Event{
						Type: "test.append", Actor: fmt.Sprintf("writer-%d", w),
						Subject: map[string]any{"i": i}, Payload: map[string]any{"w": w, "note": "ünïcode ✓", "ratio": 0.1 * float64(i)},
					}
					if w%4 == 0 {
						_, err := j.AppendSequenced(ctx, "tn_a", e)
						return err
					}
					_, err := j.Append(ctx, "tn_a", e)
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
	if !rep.OK || rep.Events != writers*each || rep.HeadSeq != writers*each || rep.Pending != 0 {
		t.Fatalf("report = %+v, want ok with %d events, none pending", rep, writers*each)
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
	j := journal.New(db, nil)
	if _, err := j.Append(context.Background(), "tn", journal.Event{Type: "x"}); err == nil {
		t.Fatal("Append outside a transaction succeeded")
	}
	// A context kept past its commit: the event could never be written.
	var kept context.Context
	if err := db.InTx(context.Background(), func(ctx context.Context) error {
		kept = ctx
		_, err := j.Append(ctx, "tn", journal.Event{Type: "in"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(kept, "tn", journal.Event{Type: "late"}); err == nil {
		t.Fatal("Append after the commit succeeded")
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
	appendOne(t, ctx, db, j, "tn_r", journal.Event{Type: "kept", Actor: "k"})
	if rep, _ := j.Verify(ctx, "tn_r"); !rep.OK || rep.Events != 2 || rep.HeadSeq != 2 || rep.Pending != 0 {
		t.Fatalf("after a rolled-back append: %+v, want 2 events, none pending", rep)
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

// Within one unit of work events keep their order whichever way they are
// appended: pending ones are chained before a sequenced one, and once the
// transaction holds the head the rest are chained at once.
func TestOrderWithinUnitOfWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	j := journal.New(db, nil)
	var mid journal.Sequenced
	err := db.InTx(ctx, func(ctx context.Context) error {
		for i, typ := range []string{"first", "second", "third", "fourth"} {
			e := journal.Event{Type: typ, Actor: "k", Payload: map[string]any{"i": i}}
			var err error
			if typ == "third" {
				mid, err = j.AppendSequenced(ctx, "tn_o", e)
			} else {
				_, err = j.Append(ctx, "tn_o", e)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if mid.Seq != 3 {
		t.Fatalf("sequenced event's seq = %d, want 3", mid.Seq)
	}
	evs, got := chain(t, j, "tn_o")
	if got != "first,second,third,fourth" {
		t.Fatalf("chain order = %v", got)
	}
	if evs[2].ID != mid.ID || !bytes.Equal(evs[2].Hash, mid.Hash) {
		t.Fatalf("stored third event %s/%x, AppendSequenced said %s/%x", evs[2].ID, evs[2].Hash, mid.ID, mid.Hash)
	}
	if rep, _ := j.Verify(ctx, "tn_o"); !rep.OK || rep.Events != 4 || rep.Pending != 0 {
		t.Fatalf("%+v", rep)
	}
}

// An event is in the chain when its unit of work returns, with the id and
// time Append gave it; workarea "" is stored as none.
func TestAppendIsChainedOnReturn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	j := journal.New(db, nil)
	a := appendOne(t, ctx, db, j, "tn_c", journal.Event{Type: "one", Actor: "k", Workarea: "wa_1", Subject: map[string]any{"x": 1}})
	b := appendOne(t, ctx, db, j, "tn_c", journal.Event{Type: "two", Actor: "k"})
	evs, err := j.After(ctx, "tn_c", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].ID != a.ID || !evs[0].At.Equal(a.At) || evs[0].Workarea != "wa_1" ||
		evs[1].ID != b.ID || evs[1].Workarea != "" || evs[1].Seq != 2 {
		t.Fatalf("events = %+v; appended %+v, %+v", evs, a, b)
	}
	if head, _ := j.Head(ctx, "tn_c"); head != 2 {
		t.Fatalf("head = %d", head)
	}
}

// A process that dies between its commit and its sequencer's pass leaves
// events pending: Verify counts them, the next write to the tenant chains
// them first, and the sweep chains them for a tenant nobody writes to.
func TestPendingLeftByACrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	j := journal.New(db, nil)
	appendOne(t, ctx, db, j, "tn_p", journal.Event{Type: "before", Actor: "k"})
	leave := func(tenant, id, typ string) {
		t.Helper()
		_, err := db.Pool.Exec(ctx, `INSERT INTO platform.journal_pending (tenant_id, event_id, event_type, at, actor, subject, payload)
			VALUES ($1, $2, $3, now(), 'k', '{"n": 1.50}', '{"s": "ü"}')`, tenant, id, typ)
		if err != nil {
			t.Fatal(err)
		}
	}
	leave("tn_p", "ev_crash1", "left.one")
	leave("tn_p", "ev_crash2", "left.two")
	rep, err := j.Verify(ctx, "tn_p")
	if err != nil || !rep.OK || rep.Events != 1 || rep.Pending != 2 {
		t.Fatalf("with two events left pending: %+v, %v", rep, err)
	}
	appendOne(t, ctx, db, j, "tn_p", journal.Event{Type: "after", Actor: "k"})
	if _, got := chain(t, j, "tn_p"); got != "before,left.one,left.two,after" {
		t.Fatalf("chain = %v", got)
	}

	// A tenant nobody writes to: the sweep.
	leave("tn_q", "ev_crash3", "left.alone")
	_, n, err := j.Sweep(ctx, 100)
	if err != nil || n < 1 {
		t.Fatalf("sweep chained %d, %v", n, err)
	}
	for _, tenant := range []string{"tn_p", "tn_q"} {
		if rep, err := j.Verify(ctx, tenant); err != nil || !rep.OK || rep.Pending != 0 {
			t.Fatalf("%s after the sweep: %+v, %v", tenant, rep, err)
		}
	}
}

// Two processes (two journals on two pools) appending to one tenant and
// sweeping at the same time never chain an event twice or skip one.
func TestSweepRacesWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.NewURL(t)
	var js []*journal.Journal
	var dbs []*pg.DB
	for range 2 {
		db, err := pg.Open(ctx, u, pg.Options{MaxConns: 6})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		dbs = append(dbs, db)
		js = append(js, journal.New(db, nil))
	}
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	for w := range 8 {
		wg.Go(func() {
			for i := range 25 {
				err := dbs[w%2].InTx(ctx, func(ctx context.Context) error {
					_, err := js[w%2].Append(ctx, "tn_s", journal.Event{Type: "w", Actor: "k", Payload: map[string]any{"w": w, "i": i}})
					return err
				})
				if err != nil {
					errc <- err
					return
				}
			}
		})
	}
	for k := range 2 {
		wg.Go(func() {
			for range 20 {
				if _, _, err := js[k].Sweep(ctx, 10); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if rep, err := js[0].Verify(ctx, "tn_s"); err != nil || !rep.OK || rep.Events != 200 || rep.Pending != 0 {
		t.Fatalf("%+v, %v", rep, err)
	}
}

// An event never precedes, in the chain, one whose effects its unit of
// work saw: here the first unit of work appends, then waits on a row the
// second holds; the second appends and commits; the first goes on and
// commits. The second's event comes first.
func TestCausalOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	j := journal.New(db, nil)
	if _, err := db.Pool.Exec(ctx, `CREATE TABLE causal (id int PRIMARY KEY, v text); INSERT INTO causal VALUES (1, '')`); err != nil {
		t.Fatal(err)
	}
	appendOne(t, ctx, db, j, "tn_causal", journal.Event{Type: "start", Actor: "k"})
	locked, appended := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 2)
	go func() { // the second unit of work
		errc <- db.InTx(ctx, func(ctx context.Context) error {
			if _, err := db.Conn(ctx).Exec(ctx, `UPDATE causal SET v = 'second' WHERE id = 1`); err != nil {
				return err
			}
			close(locked)
			<-appended
			_, err := j.Append(ctx, "tn_causal", journal.Event{Type: "second", Actor: "k"})
			return err
		})
	}()
	select {
	case <-locked:
	case err := <-errc:
		t.Fatalf("the second unit of work ended early: %v", err)
	}
	err := db.InTx(ctx, func(ctx context.Context) error { // the first
		if _, err := j.Append(ctx, "tn_causal", journal.Event{Type: "first", Actor: "k"}); err != nil {
			return err
		}
		close(appended)
		// Waits for the second to commit, then sees its write.
		var v string
		if err := db.Conn(ctx).QueryRow(ctx, `UPDATE causal SET v = v || '+first' WHERE id = 1 RETURNING v`).Scan(&v); err != nil {
			return err
		}
		if v != "second+first" {
			return fmt.Errorf("saw %q", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if _, got := chain(t, j, "tn_causal"); got != "start,second,first" {
		t.Fatalf("chain = %v, want the second unit of work's event before the first's", got)
	}
}

// A unit of work that finds the head taken writes its events pending, in
// one statement, and the sequencer chains them in the order appended once
// the head is free.
func TestPendingKeepsOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	j := journal.New(db, nil)
	appendOne(t, ctx, db, j, "tn_k", journal.Event{Type: "start", Actor: "k"})
	holding, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- db.InTx(ctx, func(ctx context.Context) error {
			if _, err := j.AppendSequenced(ctx, "tn_k", journal.Event{Type: "held", Actor: "k"}); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	select {
	case <-holding:
	case err := <-held:
		t.Fatalf("the holder ended early: %v", err)
	}
	written := make(chan error, 1)
	go func() {
		written <- db.InTx(ctx, func(ctx context.Context) error {
			for _, typ := range []string{"a", "b", "c"} {
				if _, err := j.Append(ctx, "tn_k", journal.Event{Type: typ, Actor: "k", Workarea: "wa_" + typ}); err != nil {
					return err
				}
			}
			return nil
		})
	}()
	// The three are committed pending while the head is held.
	for {
		var n int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM platform.journal_pending WHERE tenant_id = 'tn_k'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 3 {
			break
		}
		select {
		case err := <-written:
			t.Fatalf("the writer returned while the head was held: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	evs, got := chain(t, j, "tn_k")
	if got != "start,held,a,b,c" || evs[4].Workarea != "wa_c" {
		t.Fatalf("chain = %v", got)
	}
	if rep, err := j.Verify(ctx, "tn_k"); err != nil || !rep.OK || rep.Pending != 0 {
		t.Fatalf("%+v, %v", rep, err)
	}
}

// One unit of work that appends to two tenants, the first with more
// pending events than one statement takes (1,201 left by a crash): its
// flush chains them page by page and then its own event, each insert in
// the pipeline of the statement after it (pg.DB.Later), and then the
// second tenant's. Both chains verify, in order, with nothing pending.
func TestFlushChainsPagesAndTenantsInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	j := journal.New(db, nil)
	appendOne(t, ctx, db, j, "tn_big", journal.Event{Type: "first", Actor: "k"})
	appendOne(t, ctx, db, j, "tn_small", journal.Event{Type: "first", Actor: "k"})
	if _, err := db.Pool.Exec(ctx, `INSERT INTO platform.journal_pending (tenant_id, event_id, event_type, at, actor, subject, payload)
		SELECT 'tn_big', 'ev_left' || lpad(i::text, 5, '0'), 'left', now(), 'k', ('{"i": ' || i || '}')::jsonb, '{}'
		FROM generate_series(1, 1201) AS i ORDER BY i`); err != nil {
		t.Fatal(err)
	}
	err := db.InTx(ctx, func(ctx context.Context) error {
		for _, tenant := range []string{"tn_big", "tn_small"} {
			if _, err := j.Append(ctx, tenant, journal.Event{Type: "mine", Actor: "k"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for tenant, events := range map[string]int64{"tn_big": 1203, "tn_small": 2} {
		rep, err := j.Verify(ctx, tenant)
		if err != nil || !rep.OK || rep.Events != events || rep.Pending != 0 {
			t.Fatalf("%s: %+v, %v", tenant, rep, err)
		}
	}
	evs, err := j.After(ctx, "tn_big", 1200, 10)
	if err != nil || len(evs) != 3 || evs[0].ID != "ev_left01200" || evs[1].ID != "ev_left01201" || evs[2].Type != "mine" {
		t.Fatalf("the chain's end: %+v, %v", evs, err)
	}
}
