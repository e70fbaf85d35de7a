package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/omlhub/oml/contexts/retrieval/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

// The group writer's edges, driven from inside: hold makes rows queue up
// behind a write, and batchTap sees (and can spoil) what reaches the pool.
// TestReadLogWritesConcurrentReads (package retrieval) covers the happy
// path through LogRead.

func readLogRow(key, op string) dbsqlc.ReadLogInsertParams {
	return dbsqlc.ReadLogInsertParams{TenantID: "ten_a", KeyID: key, WorkareaID: "wa_1", QuerySha256: []byte{1},
		Returned: []string{"art_" + key}, At: time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC), Operation: op, Simulations: []string{}}
}

func readLogRows(t *testing.T, db *pg.DB, key string) int {
	t.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM retrieval.read_log WHERE key_id LIKE $1`, key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// queued waits until n rows wait in w's queue.
func queued(t *testing.T, w *readLogWriter, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		w.mu.Lock()
		got := len(w.queue)
		w.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows queued, want %d", got, n)
		}
	}
}

// batchTap passes batches to the pool, recording their sizes; with
// execErr or closeErr set, it reports that error for every row's result
// or for the close after the real batch ran (and committed); with panics
// set, it panics instead of sending.
type batchTap struct {
	dbsqlc.DBTX
	execErr, closeErr error
	panics            bool

	mu     sync.Mutex
	sizes  []int
	closes int // Close calls that reached a batch
}

func (b *batchTap) SendBatch(ctx context.Context, batch *pgx.Batch) pgx.BatchResults {
	b.mu.Lock()
	b.sizes = append(b.sizes, batch.Len())
	b.mu.Unlock()
	if b.panics {
		panic("tap")
	}
	return &tappedResults{BatchResults: b.DBTX.SendBatch(ctx, batch), tap: b}
}

func (b *batchTap) batches() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.sizes...)
}

// closedOnce fails t unless every batch was closed exactly once: a pool's
// batch gives its connection back at the first Close, so a second one
// touches a connection another goroutine may hold (pg.CloseOnce).
func (b *batchTap) closedOnce(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closes != len(b.sizes) {
		t.Fatalf("%d closes for %d batches", b.closes, len(b.sizes))
	}
}

type tappedResults struct {
	pgx.BatchResults
	tap *batchTap
}

func (r *tappedResults) Exec() (pgconn.CommandTag, error) {
	tag, err := r.BatchResults.Exec()
	if err == nil && r.tap.execErr != nil {
		err = r.tap.execErr
	}
	return tag, err
}

func (r *tappedResults) Close() error {
	r.tap.mu.Lock()
	r.tap.closes++
	r.tap.mu.Unlock()
	err := r.BatchResults.Close()
	if err == nil && r.tap.closeErr != nil {
		err = r.tap.closeErr
	}
	return err
}

// writeAll starts one write per row and returns a function waiting for
// their errors, in order.
func writeAll(ctx context.Context, w *readLogWriter, rows []dbsqlc.ReadLogInsertParams) func() []error {
	var wg sync.WaitGroup
	out := make([]error, len(rows))
	for i, row := range rows {
		wg.Go(func() { out[i] = w.write(ctx, row) })
	}
	return func() []error { wg.Wait(); return out }
}

// A refused row queued among good ones goes in one batch with them; the
// batch fails as a whole, each row is written again alone, and only the
// refused row's caller gets an error, Postgres's own.
func TestReadLogRefusedRowFailsOnlyItsCaller(t *testing.T) {
	db := pgtest.New(t)
	tap := &batchTap{DBTX: db.Pool}
	w := &readLogWriter{db: tap, q: dbsqlc.New(), hold: make(chan struct{})}
	var rows []dbsqlc.ReadLogInsertParams
	for i := range 16 {
		rows = append(rows, readLogRow(fmt.Sprintf("good_%02d", i), "recall"))
	}
	rows = append(rows[:8], append([]dbsqlc.ReadLogInsertParams{readLogRow("bad", "bogus")}, rows[8:]...)...)
	wait := writeAll(context.Background(), w, rows)
	queued(t, w, len(rows))
	close(w.hold)
	got := wait()

	if sizes := tap.batches(); len(sizes) != 1+len(rows) || sizes[0] != len(rows) {
		t.Fatalf("batches %v: want one of %d, then each row alone", sizes, len(rows))
	}
	tap.closedOnce(t)
	for i, err := range got {
		if rows[i].KeyID == "bad" {
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "23514" || readLogRows(t, db, "bad") != 0 {
				t.Fatalf("the refused row: %v, %d rows", err, readLogRows(t, db, "bad"))
			}
			continue
		}
		if err != nil || readLogRows(t, db, rows[i].KeyID) != 1 {
			t.Fatalf("%s beside a refused row: %v, %d rows", rows[i].KeyID, err, readLogRows(t, db, rows[i].KeyID))
		}
	}
}

// When a batch fails for a reason that is not a row's own (a lost
// connection, an error at the commit, a server refusing every row alike),
// every caller gets the error and no row is written again: none is
// written twice, and a server short of connections is not asked once per
// row.
func TestReadLogUnknownOutcomeFailsEveryRowWithoutRewriting(t *testing.T) {
	tooMany := &pgconn.PgError{Severity: "FATAL", Code: "53300", Message: "sorry, too many clients already"}
	for name, tap := range map[string]*batchTap{
		"every row":          {execErr: io.ErrUnexpectedEOF},
		"the close":          {closeErr: io.ErrUnexpectedEOF},
		"too many clients":   {execErr: tooMany},
		"refused at the end": {closeErr: tooMany},
	} {
		t.Run(name, func(t *testing.T) {
			db := pgtest.New(t)
			tap.DBTX = db.Pool
			w := &readLogWriter{db: tap, q: dbsqlc.New(), hold: make(chan struct{})}
			var rows []dbsqlc.ReadLogInsertParams
			for i := range 8 {
				rows = append(rows, readLogRow(fmt.Sprintf("row_%d", i), "recall"))
			}
			wait := writeAll(context.Background(), w, rows)
			queued(t, w, len(rows))
			close(w.hold)
			want := cmp.Or(tap.execErr, tap.closeErr)
			for i, err := range wait() {
				if !errors.Is(err, want) {
					t.Fatalf("row %d: %v, want the batch's error", i, err)
				}
			}
			if sizes := tap.batches(); len(sizes) != 1 {
				t.Fatalf("batches %v: rows written again after an unknown outcome", sizes)
			}
			tap.closedOnce(t)
			// The batch did commit here (the error was made up after it):
			// once each, never twice.
			if n := readLogRows(t, db, "row_%"); n != len(rows) {
				t.Fatalf("%d rows for %d writes", n, len(rows))
			}
		})
	}
}

// A caller whose context ends while its row waits leaves at once and takes
// its row out; a full queue refuses at once with a typed, retryable
// error; both while a write is stuck.
func TestReadLogCallerLeavesOnItsContextAndAFullQueueRefuses(t *testing.T) {
	db := pgtest.New(t)
	w := &readLogWriter{db: db.Pool, q: dbsqlc.New(), hold: make(chan struct{})}

	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan error, 1)
	go func() { left <- w.write(ctx, readLogRow("left", "recall")) }()
	queued(t, w, 1)
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled caller: %v", err)
	}
	queued(t, w, 0)

	var rows []dbsqlc.ReadLogInsertParams
	for i := range maxReadLogQueue {
		rows = append(rows, readLogRow(fmt.Sprintf("full_%04d", i), "recall"))
	}
	wait := writeAll(context.Background(), w, rows)
	queued(t, w, maxReadLogQueue)
	var e *errs.Error
	if err := w.write(context.Background(), readLogRow("over", "recall")); !errors.As(err, &e) || e.Code != errs.Unavailable || !e.Retryable {
		t.Fatalf("a write beyond the queue's bound: %v", err)
	}
	close(w.hold)
	for i, err := range wait() {
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	if n, left, over := readLogRows(t, db, "full_%"), readLogRows(t, db, "left"), readLogRows(t, db, "over"); n != maxReadLogQueue || left != 0 || over != 0 {
		t.Fatalf("%d of %d queued rows written; the cancelled one %d times, the refused one %d", n, maxReadLogQueue, left, over)
	}
}

// A panic while writing becomes every waiting caller's error; the writer
// goes on serving the next writes.
func TestReadLogPanicFailsTheBatchAndTheWriterRecovers(t *testing.T) {
	db := pgtest.New(t)
	tap := &batchTap{DBTX: db.Pool, panics: true}
	w := &readLogWriter{db: tap, q: dbsqlc.New()}
	if err := w.write(context.Background(), readLogRow("panic", "recall")); err == nil {
		t.Fatal("a write that panicked returned no error")
	}
	tap.panics = false
	if err := w.write(context.Background(), readLogRow("after", "recall")); err != nil || readLogRows(t, db, "after") != 1 {
		t.Fatalf("the write after a panic: %v", err)
	}
}
