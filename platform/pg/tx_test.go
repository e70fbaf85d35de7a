package pg_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

// roundTrips counts what reaches Postgres: each statement sent alone and
// each batch (one round trip for all its statements).
type roundTrips struct {
	mu   sync.Mutex
	sent []string
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.add(d.SQL)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var sqls []string
	for _, q := range d.Batch.QueuedQueries {
		sqls = append(sqls, q.SQL)
	}
	r.add("batch[" + strings.Join(sqls, "; ") + "]")
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (r *roundTrips) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, s)
}

func (r *roundTrips) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// rowsOfT counts the committed rows of the test's table t.
func rowsOfT(t *testing.T, db *pg.DB) int {
	t.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A unit of work sends its BEGIN with its first statement, whichever
// method sends that (one round trip, not two), and one that makes no
// statement sends nothing. The first statement runs in the transaction:
// a rollback takes it back.
func TestUnitOfWorkBeginsWithItsFirstStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	trips := &roundTrips{}
	db := openDB(t, pg.Options{MaxConns: 1, Tracer: trips}, `CREATE TABLE t (n int)`)
	count := func() int { return rowsOfT(t, db) }
	trips.take()

	if err := db.InTx(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := trips.take(); len(got) != 0 {
		t.Fatalf("a unit of work with no statement sent %q", got)
	}

	undone := errors.New("undone")
	firsts := map[string]func(q pg.Querier) error{
		"Exec": func(q pg.Querier) error {
			_, err := q.Exec(ctx, `INSERT INTO t VALUES ($1)`, 1)
			return err
		},
		"Query": func(q pg.Querier) error {
			rows, err := q.Query(ctx, `INSERT INTO t VALUES (1), (2) RETURNING n`)
			if err != nil {
				return err
			}
			_, err = pgx.CollectRows(rows, pgx.RowTo[int32])
			return err
		},
		"Query, closed early": func(q pg.Querier) error {
			rows, err := q.Query(ctx, `INSERT INTO t VALUES (1), (2) RETURNING n`)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		},
		"QueryRow": func(q pg.Querier) error {
			var n int
			return q.QueryRow(ctx, `INSERT INTO t VALUES (1) RETURNING n`).Scan(&n)
		},
		"SendBatch": func(q pg.Querier) error {
			b := &pgx.Batch{}
			b.Queue(`INSERT INTO t VALUES (1)`)
			b.Queue(`INSERT INTO t VALUES (2)`)
			return q.SendBatch(ctx, b).Close()
		},
	}
	for name, first := range firsts {
		err := db.InTx(ctx, func(ctx context.Context) error {
			q := db.Conn(ctx)
			if err := first(q); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			// The connection is free for the next statement.
			var n int
			if err := q.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n == 0 {
				t.Fatalf("%s: the unit of work sees %d rows (%v)", name, n, err)
			}
			return undone
		})
		if !errors.Is(err, undone) {
			t.Fatalf("%s: InTx = %v", name, err)
		}
		if n := count(); n != 0 {
			t.Fatalf("%s: %d rows after the rollback: the first statement ran outside the transaction", name, n)
		}
		got := trips.take()
		// The pipeline of BEGIN and the statement, the count, the
		// rollback, and this test's own count.
		if len(got) != 4 || !strings.HasPrefix(got[0], "batch[begin") || got[2] != "rollback" {
			t.Fatalf("%s: sent %q, want BEGIN in one round trip with the first statement", name, got)
		}
	}

	// A first statement a pipeline would change begins in a round trip
	// of its own, still inside the transaction: one with pgx's query
	// options (a batch drops them), and an Exec with no arguments (pgx
	// sends it over the simple protocol, where it may hold several
	// statements).
	alone := map[string]func(q pg.Querier) error{
		"an exec mode": func(q pg.Querier) error {
			rows, err := q.Query(ctx, `INSERT INTO t VALUES ($1) RETURNING n`, pgx.QueryExecModeExec, 1)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		},
		"two statements in one Exec": func(q pg.Querier) error {
			_, err := q.Exec(ctx, `INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)`)
			return err
		},
	}
	for name, first := range alone {
		err := db.InTx(ctx, func(ctx context.Context) error {
			if err := first(db.Conn(ctx)); err != nil {
				return err
			}
			return undone
		})
		if !errors.Is(err, undone) {
			t.Fatalf("a first statement with %s: %v", name, err)
		}
		if n := count(); n != 0 {
			t.Fatalf("%d rows after the rollback of a first statement with %s", n, name)
		}
		if got := trips.take(); len(got) != 4 || got[0] != "begin" {
			t.Fatalf("a first statement with %s sent %q", name, got)
		}
	}

	// Committed, every form keeps its rows.
	for name, first := range firsts {
		if err := db.InTx(ctx, func(ctx context.Context) error { return first(db.Conn(ctx)) }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if n := count(); n != 8 {
		t.Fatalf("%d rows committed, want 8", n)
	}
	if n := db.Pool.Stat().AcquiredConns(); n != 0 {
		t.Fatalf("%d connections still acquired", n)
	}
}

// The first statement's failure, a panic after it, or a failed BEGIN leave
// the pool's one connection out of any transaction, and no row behind.
func TestUnitOfWorkEndsCleanWhenItsFirstStatementFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, pg.Options{MaxConns: 1}, `CREATE TABLE t (n int CHECK (n > 0))`)
	for range 3 {
		err := db.InTx(ctx, func(ctx context.Context) error {
			_, err := db.Conn(ctx).Exec(ctx, `INSERT INTO t VALUES (0)`)
			return err
		})
		if !pg.IsCode(err, "23514") {
			t.Fatalf("a refused first Exec: %v", err)
		}
		err = db.InTx(ctx, func(ctx context.Context) error {
			// A failed first Query still answers rows, as pgx's does.
			rows, err := db.Conn(ctx).Query(ctx, `SELECT n FROM missing`)
			if err == nil || rows == nil || rows.Next() || rows.Err() == nil {
				t.Fatalf("a failed first Query: %v, rows %v", err, rows)
			}
			return nil
		})
		// A statement Postgres cannot prepare fails before the pipeline
		// is sent, so no transaction began: the commit is refused either way.
		if !errors.Is(err, pgx.ErrTxCommitRollback) && !errors.Is(err, pgx.ErrTxClosed) {
			t.Fatalf("committing after a failed first Query: %v", err)
		}
		err = db.InTx(ctx, func(ctx context.Context) error {
			var n int
			return db.Conn(ctx).QueryRow(ctx, `SELECT n FROM t`).Scan(&n)
		})
		if !pg.IsNoRows(err) {
			t.Fatalf("a first QueryRow with no row: %v, want pgx.ErrNoRows", err)
		}
		err = db.InTx(ctx, func(ctx context.Context) error {
			b := &pgx.Batch{}
			b.Queue(`INSERT INTO t VALUES (1)`)
			b.Queue(`SELECT 1/0`)
			return db.Conn(ctx).SendBatch(ctx, b).Close()
		})
		if !pg.IsCode(err, "22012") {
			t.Fatalf("a failing first batch: %v", err)
		}
		func() {
			defer func() { _ = recover() }()
			_ = db.InTx(ctx, func(ctx context.Context) error {
				if _, err := db.Conn(ctx).Exec(ctx, `INSERT INTO t VALUES (1)`); err != nil {
					t.Fatal(err)
				}
				panic("boom")
			})
		}()
		// A statement after the unit of work failed is refused, and the
		// failure rolls it back.
		err = db.InTx(ctx, func(ctx context.Context) error {
			q := db.Conn(ctx)
			if _, err := q.Exec(ctx, `SELECT 1/0`); err == nil {
				t.Fatal("1/0 ran")
			}
			_, err := q.Exec(ctx, `INSERT INTO t VALUES (1)`)
			if !pg.IsCode(err, "25P02") {
				t.Fatalf("a statement after the failure: %v, want in_failed_sql_transaction", err)
			}
			return nil
		})
		if !errors.Is(err, pgx.ErrTxCommitRollback) {
			t.Fatalf("committing an aborted unit of work: %v, want pgx.ErrTxCommitRollback", err)
		}
	}
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows left behind (%v)", n, err)
	}
	// A cancelled context before the first statement: nothing is sent,
	// and the connection is still good.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	err := db.InTx(cancelled, func(ctx context.Context) error {
		_, err := db.Conn(ctx).Exec(ctx, `INSERT INTO t VALUES (1)`)
		return err
	})
	if err == nil {
		t.Fatal("a unit of work ran on a cancelled context")
	}
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after the cancelled unit of work: %d rows (%v)", n, err)
	}
	// A context cancelled once the connection is held, before the first
	// statement's pipeline goes out (each form): refused, nothing written,
	// and the pool's one connection serves the next unit of work.
	for _, form := range []string{"Exec", "Query", "QueryRow", "SendBatch"} {
		held, cancel := context.WithCancel(ctx)
		err := db.InTx(held, func(ctx context.Context) error {
			cancel()
			q := db.Conn(ctx)
			switch form {
			case "Exec":
				_, err := q.Exec(ctx, `INSERT INTO t VALUES ($1)`, 1)
				return err
			case "Query":
				rows, err := q.Query(ctx, `INSERT INTO t VALUES ($1) RETURNING n`, 1)
				if err == nil {
					rows.Close()
					err = rows.Err()
				}
				return err
			case "QueryRow":
				var v int
				return q.QueryRow(ctx, `INSERT INTO t VALUES ($1) RETURNING n`, 1).Scan(&v)
			}
			b := &pgx.Batch{}
			b.Queue(`INSERT INTO t VALUES ($1)`, 1)
			return q.SendBatch(ctx, b).Close()
		})
		if err == nil {
			t.Fatalf("%s: a unit of work ran on a context cancelled inside it", form)
		}
		if err := db.InTx(ctx, func(ctx context.Context) error {
			return db.Conn(ctx).QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n)
		}); err != nil || n != 0 {
			t.Fatalf("%s: after a context cancelled inside the unit of work: %d rows (%v)", form, n, err)
		}
	}
}

// InSnapshot's options reach the pipelined BEGIN: its first statement
// already runs read-only at REPEATABLE READ.
func TestSnapshotBeginsWithItsOptions(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	err := db.InSnapshot(ctx, func(ctx context.Context) error {
		var iso, ro string
		if err := db.Conn(ctx).QueryRow(ctx, `SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')`).Scan(&iso, &ro); err != nil {
			return err
		}
		if iso != "repeatable read" || ro != "on" {
			t.Fatalf("the snapshot's first statement ran at %s, read only %s", iso, ro)
		}
		_, err := db.Conn(ctx).Exec(ctx, `CREATE TABLE u (n int)`)
		if !pg.IsCode(err, "25006") {
			t.Fatalf("a write in a snapshot: %v, want read_only_sql_transaction", err)
		}
		return nil
	})
	if !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Fatalf("InSnapshot = %v", err)
	}
}

// A unit of work gives its connection back as it commits: what runs after
// the commit (the journal's sequencer pass is a unit of work of its own)
// finds it free on a pool of one.
func TestCommitGivesTheConnectionBackBeforeAfterCommit(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	db := openDB(t, pg.Options{MaxConns: 1}, "")
	var after error
	err := db.InTx(ctx, func(ctx context.Context) error {
		if _, err := db.Conn(ctx).Exec(ctx, `SELECT 1`); err != nil {
			return err
		}
		pg.AfterCommit(ctx, func() {
			// A fresh context (the unit of work's has ended), bounded: a
			// connection still held would make the acquire wait for ever.
			next, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			after = db.InTx(next, func(ctx context.Context) error {
				_, err := db.Conn(ctx).Exec(ctx, `SELECT 2`)
				return err
			})
		})
		return nil
	})
	if err != nil || after != nil {
		t.Fatalf("InTx = %v, the unit of work after its commit = %v", err, after)
	}
}

// A statement given to Later waits for the next one and goes in its
// pipeline, before it (so the next statement sees its effect), or in the
// COMMIT's; outside a unit of work it runs at once.
func TestLaterGoesWithTheNextStatementOrTheCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	trips := &roundTrips{}
	db := openDB(t, pg.Options{MaxConns: 1, Tracer: trips}, `CREATE TABLE t (n int)`)
	count := func() int { return rowsOfT(t, db) }
	insert := `INSERT INTO t VALUES ($1)`
	trips.take()

	// Queued first, with a read after it: one round trip for the BEGIN,
	// the insert and the read, which sees the row; then the COMMIT.
	err := db.InTx(ctx, func(ctx context.Context) error {
		if _, err := db.Later(ctx, "first").Exec(ctx, insert, 1); err != nil {
			return err
		}
		if got := trips.take(); len(got) != 0 {
			t.Fatalf("Later sent %q at once", got)
		}
		var n int
		if err := db.Conn(ctx).QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("the next statement sees %d rows (%v)", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := trips.take(); len(got) != 2 || got[0] != "batch[begin; "+insert+"; SELECT count(*) FROM t]" || got[1] != "commit" {
		t.Fatalf("sent %q", got)
	}

	// Queued last: in one round trip with the COMMIT, two of them in the
	// order given; a unit of work of only queued statements is one round
	// trip in all.
	err = db.InTx(ctx, func(ctx context.Context) error {
		if _, err := db.Conn(ctx).Exec(ctx, insert, 2); err != nil {
			return err
		}
		for n := 3; n <= 4; n++ {
			if _, err := db.Later(ctx, "last").Exec(ctx, insert, n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := trips.take(); len(got) != 2 || got[1] != "batch["+insert+"; "+insert+"; commit]" {
		t.Fatalf("sent %q", got)
	}
	if err := db.InTx(ctx, func(ctx context.Context) error {
		_, err := db.Later(ctx, "only").Exec(ctx, insert, 5)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := trips.take(); len(got) != 1 || got[0] != "batch[begin; "+insert+"; commit]" {
		t.Fatalf("sent %q", got)
	}

	// A statement a pipeline would change (here an Exec with no
	// arguments) goes alone, after what is queued.
	if err := db.InTx(ctx, func(ctx context.Context) error {
		if _, err := db.Later(ctx, "before").Exec(ctx, insert, 6); err != nil {
			return err
		}
		_, err := db.Conn(ctx).Exec(ctx, `INSERT INTO t SELECT n + 100 FROM t WHERE n = 6`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := trips.take(); len(got) != 3 || got[0] != "batch[begin; "+insert+"]" || got[2] != "commit" {
		t.Fatalf("sent %q", got)
	}
	if n := count(); n != 7 {
		t.Fatalf("%d rows, want 7", n)
	}
	trips.take()

	// Outside a unit of work, at once.
	if _, err := db.Later(ctx, "alone").Exec(ctx, insert, 8); err != nil {
		t.Fatal(err)
	}
	if got := trips.take(); len(got) != 1 || got[0] != insert {
		t.Fatalf("sent %q", got)
	}
	// A statement with no arguments cannot wait (pgx sends it over the
	// simple protocol): refused, nothing queued.
	err = db.InTx(ctx, func(ctx context.Context) error {
		_, err := db.Later(ctx, "no args").Exec(ctx, `INSERT INTO t VALUES (9)`)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "no args") {
		t.Fatalf("a queued Exec with no arguments: %v", err)
	}
	if n := count(); n != 8 {
		t.Fatalf("%d rows, want 8", n)
	}
}

// A queued statement's failure fails the statement it went with, or the
// commit, labelled as Later was told: nothing of the unit of work stays,
// and the pool's one connection is clean for the next.
func TestLaterFailureFailsTheUnitOfWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, pg.Options{MaxConns: 1}, `CREATE TABLE t (n int CHECK (n > 0))`)
	insert := `INSERT INTO t VALUES ($1)`
	for name, next := range map[string]func(ctx context.Context) error{
		"the next statement": func(ctx context.Context) error {
			var n int
			return db.Conn(ctx).QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n)
		},
		"the next query's rows": func(ctx context.Context) error {
			rows, err := db.Conn(ctx).Query(ctx, `SELECT n FROM t WHERE n > $1`, 0)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		},
		"the next batch": func(ctx context.Context) error {
			b := &pgx.Batch{}
			b.Queue(insert, 2)
			return db.Conn(ctx).SendBatch(ctx, b).Close()
		},
		"a statement that goes alone": func(ctx context.Context) error {
			_, err := db.Conn(ctx).Exec(ctx, `INSERT INTO t VALUES (3)`)
			return err
		},
		"the commit": func(context.Context) error { return nil },
	} {
		var nextErr error
		err := db.InTx(ctx, func(ctx context.Context) error {
			if _, err := db.Conn(ctx).Exec(ctx, insert, 1); err != nil {
				return err
			}
			if _, err := db.Later(ctx, "queued insert").Exec(ctx, insert, 0); err != nil {
				t.Fatalf("%s: queueing failed at once: %v", name, err)
			}
			nextErr = next(ctx)
			return nextErr
		})
		// The queued statement's refusal, labelled, and never read as the
		// next statement's own (pg.IsCode answers false for it).
		var q *pg.QueuedError
		var pgErr *pgconn.PgError
		if !errors.As(err, &q) || q.Label != "queued insert" || !errors.As(err, &pgErr) || pgErr.Code != "23514" || pg.IsCode(err, "23514") {
			t.Fatalf("%s: InTx = %v, want the queued statement's check violation", name, err)
		}
		if name != "the commit" && !errors.As(nextErr, &q) {
			t.Fatalf("%s answered %v", name, nextErr)
		}
		var n int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s: %d rows stayed (%v)", name, n, err)
		}
	}
	// A cancelled context at the commit: nothing commits, the connection
	// does not come back in a transaction.
	cctx, cancel := context.WithCancel(ctx)
	err := db.InTx(cctx, func(ctx context.Context) error {
		if _, err := db.Conn(ctx).Exec(ctx, insert, 1); err != nil {
			return err
		}
		_, err := db.Later(ctx, "queued").Exec(ctx, insert, 2)
		cancel()
		return err
	})
	if err == nil {
		t.Fatal("a unit of work committed on a cancelled context")
	}
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows after a cancelled commit (%v)", n, err)
	}
	if err := db.InTx(ctx, func(ctx context.Context) error {
		_, err := db.Later(ctx, "after").Exec(ctx, insert, 4)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := db.Pool.Stat().AcquiredConns(); n != 0 {
		t.Fatalf("%d connections still acquired", n)
	}
}

// A pipeline that fails before Postgres runs it (here its context is
// done) may lose the statements queued in it while the transaction stays
// open: the unit of work then fails, and commits nothing, even when the
// caller ignores that error.
func TestLaterLostMakesTheUnitOfWorkFail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, pg.Options{MaxConns: 1}, `CREATE TABLE t (n int)`)
	insert := `INSERT INTO t VALUES ($1)`
	for _, begun := range []bool{false, true} {
		err := db.InTx(ctx, func(ctx context.Context) error {
			if begun {
				if _, err := db.Conn(ctx).Exec(ctx, insert, 1); err != nil {
					return err
				}
			}
			if _, err := db.Later(ctx, "queued").Exec(ctx, insert, 2); err != nil {
				return err
			}
			done, cancel := context.WithCancel(ctx)
			cancel()
			var n int
			_ = db.Conn(ctx).QueryRow(done, `SELECT count(*) FROM t`).Scan(&n) // ignored on purpose
			if _, err := db.Later(ctx, "after").Exec(ctx, insert, 3); err == nil {
				t.Error("a statement queued after a lost one was taken")
			}
			return nil
		})
		if err == nil {
			t.Fatalf("begun %v: the unit of work committed after losing a queued statement", begun)
		}
		var n int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("begun %v: %d rows committed (%v)", begun, n, err)
		}
	}
	if err := db.InTx(ctx, func(ctx context.Context) error {
		_, err := db.Later(ctx, "next").Exec(ctx, insert, 4)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
