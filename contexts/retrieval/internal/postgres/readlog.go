package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/omlhub/oml/contexts/retrieval/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/pg"
)

// readLogWriter writes the read-log rows of concurrent recalls together:
// each caller waits until its own row is committed, so a recall still
// answers only once its read is logged, but the rows that queued while one
// write was in flight go in the next as one pgx batch, one round trip and
// one commit (an implicit transaction). With 16 writers a row took 0.10
// ms of the machine's CPU written alone and 0.04 grouped
// (BenchmarkReadLog, docs/BENCHMARKS.md).
//
// A burst of writes is drained by one goroutine, started by the caller
// that finds none running and ending when the queue is empty. A caller
// waits for its row's outcome or its own context, whichever comes first:
// a caller that leaves while its row is still queued takes the row out;
// one that leaves while its row is being written gets ctx's error, and
// the row may still commit (a logged read that answered nothing, which
// over-reports and never hides a read). The queue is bounded, so a
// stalled database fails new reads at once instead of piling them up.
type readLogWriter struct {
	db dbsqlc.DBTX // the pool: each batch takes a connection of its own
	q  *dbsqlc.Queries

	mu       sync.Mutex
	queue    []*pendingRow
	draining bool // a goroutine is writing what is queued
	// hold, when set (tests), is waited on before each write, so rows
	// queue up behind it.
	hold chan struct{}
}

// pendingRow is a queued row and where its caller learns the outcome.
type pendingRow struct {
	row  dbsqlc.ReadLogInsertParams
	done chan error // buffered (1): a write never waits for its caller
}

// maxReadLogBatch bounds one write; the rest wait for the next.
const maxReadLogBatch = 64

// maxReadLogQueue bounds the rows waiting for a write: sixteen full
// batches, a few milliseconds of work when Postgres answers.
const maxReadLogQueue = 16 * maxReadLogBatch

// readLogWriteTimeout bounds one write. A write is not stopped by any one
// caller's context (the rows are others' too); it stops here.
const readLogWriteTimeout = 10 * time.Second

// errReadLogFull is the refusal when the queue is full.
func errReadLogFull() error {
	return errs.Retry(errs.Unavailable, "a read is answered only once it is logged", time.Second,
		"the read log is not keeping up (%d reads waiting); try again shortly", maxReadLogQueue)
}

// write commits row, alone or with the rows queued beside it, or returns
// ctx's error when ctx ends first.
func (w *readLogWriter) write(ctx context.Context, row dbsqlc.ReadLogInsertParams) error {
	p := &pendingRow{row: row, done: make(chan error, 1)}
	w.mu.Lock()
	if len(w.queue) >= maxReadLogQueue {
		w.mu.Unlock()
		return errReadLogFull()
	}
	w.queue = append(w.queue, p)
	if !w.draining {
		w.draining = true
		go w.drain()
	}
	w.mu.Unlock()
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		w.mu.Lock()
		if i := slices.Index(w.queue, p); i >= 0 {
			w.queue = slices.Delete(w.queue, i, i+1)
		}
		w.mu.Unlock()
		return ctx.Err()
	}
}

// drain writes what is queued, a batch at a time, until the queue is
// empty.
func (w *readLogWriter) drain() {
	for {
		if w.hold != nil {
			<-w.hold
		}
		w.mu.Lock()
		n := min(len(w.queue), maxReadLogBatch)
		if n == 0 {
			w.draining = false
			w.mu.Unlock()
			return
		}
		batch := slices.Clone(w.queue[:n])
		w.queue = slices.Delete(w.queue, 0, n)
		w.mu.Unlock()
		w.flush(batch)
	}
}

// flush writes batch in one round trip and tells every row's caller the
// outcome, a panic included (as an error: this goroutine serves many
// callers and must not take the process down).
//
// The batch runs as one implicit transaction, committed at its Sync, so
// one refused row fails them all. When Postgres refused a row for its
// values (refused: the row's own result says so), nothing committed, and
// each row is written again alone, so a row fails only for its own
// reason. Any other error (no connection, a lost one, the deadline, an
// error only at the commit) fails every row with it: either it is the
// same for every row, or whether the commit happened is unknown and a
// row written again might be written twice.
func (w *readLogWriter) flush(batch []*pendingRow) {
	results := make([]error, len(batch))
	defer func() {
		if v := recover(); v != nil {
			for i := range results {
				results[i] = fmt.Errorf("read-log write panicked: %v", v)
			}
		}
		for i, b := range batch {
			b.done <- results[i]
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), readLogWriteTimeout)
	defer cancel()
	rows := make([]dbsqlc.ReadLogInsertParams, len(batch))
	for i, b := range batch {
		rows[i] = b.row
	}
	err := w.insert(ctx, rows, results)
	if err == nil || len(rows) == 1 || !slices.ContainsFunc(results, refused) {
		for i := range results {
			if results[i] == nil {
				results[i] = err
			}
		}
		return
	}
	for i := range rows {
		if e := w.insert(ctx, rows[i:i+1], results[i:i+1]); results[i] == nil {
			results[i] = e
		}
	}
}

// insert sends rows as one batch; see insertReadLog.
func (w *readLogWriter) insert(ctx context.Context, rows []dbsqlc.ReadLogInsertParams, results []error) error {
	return insertReadLog(ctx, w.q, w.db, rows, results)
}

// refused reports whether Postgres refused a row for the row's own values
// (a data exception or an integrity constraint, SQLSTATE classes 22 and
// 23), the refusals that writing each row alone can tell apart. A failed
// connection (pgx's ConnectError wraps the server's own "too many
// clients" or "starting up"), a statement that could not be prepared, or
// a server short of resources fails every row alike: rewriting 64 rows
// one at a time would only ask 64 more times of a server already
// refusing.
func refused(err error) bool {
	var connect *pgconn.ConnectError
	var prepare pgx.ErrPreprocessingBatch
	if errors.As(err, &connect) || errors.As(err, &prepare) {
		return false
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	class := pgErr.Code[:min(2, len(pgErr.Code))]
	return class == "22" || class == "23"
}

// insertReadLog sends rows as one batch on db, setting results[i] to row
// i's error, and returns the batch's first error, closing it (where the
// commit's error arrives) included.
func insertReadLog(ctx context.Context, q *dbsqlc.Queries, db dbsqlc.DBTX, rows []dbsqlc.ReadLogInsertParams, results []error) error {
	var first error
	// sqlc's Exec closes the batch and drops the close's error, where the
	// commit's arrives; Close once more, through CloseOnce, to read it.
	b := q.ReadLogInsert(ctx, closeOnce{db}, rows)
	b.Exec(func(i int, err error) {
		results[i] = err
		if first == nil {
			first = err
		}
	})
	if err := b.Close(); first == nil {
		first = err
	}
	return first
}

// closeOnce sends batches whose Close runs once (pg.CloseOnce).
type closeOnce struct{ dbsqlc.DBTX }

func (c closeOnce) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return pg.CloseOnce(c.DBTX.SendBatch(ctx, b))
}
