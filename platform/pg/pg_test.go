package pg_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

// openDB opens a pool with opts on a fresh migrated database, closed when
// t ends, and runs schema on it first ("" for none).
func openDB(t *testing.T, opts pg.Options, schema string) *pg.DB {
	t.Helper()
	ctx := context.Background()
	db, err := pg.Open(ctx, pgtest.NewURL(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if schema != "" {
		if _, err := db.Pool.Exec(ctx, schema); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// A panic or an error inside a unit of work rolls it back and gives the
// connection back to the pool: a pool of two survives many of each.
func TestInTxRollsBackOnPanicAndError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, pg.Options{MaxConns: 2}, `CREATE TABLE t (n int)`)
	insert := func(ctx context.Context) error {
		_, err := db.Conn(ctx).Exec(ctx, `INSERT INTO t VALUES (1)`)
		return err
	}
	for range 5 {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("the panic did not propagate")
				}
			}()
			_ = db.InTx(ctx, func(ctx context.Context) error {
				if err := insert(ctx); err != nil {
					t.Fatal(err)
				}
				panic("boom")
			})
		}()
		failed := errors.New("refused")
		if err := db.InTx(ctx, func(ctx context.Context) error { return errors.Join(insert(ctx), failed) }); !errors.Is(err, failed) {
			t.Fatalf("InTx = %v, want the refusal", err)
		}
	}
	if n := db.Pool.Stat().AcquiredConns(); n != 0 {
		t.Fatalf("%d connections still acquired after the panics", n)
	}
	var rows int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("rows after rolled-back units of work: %d (%v)", rows, err)
	}
}

// AfterCommit runs once the unit of work commits, never after a rollback.
func TestAfterCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, pg.Options{MaxConns: 2}, "")
	ran := 0
	if err := db.InTx(ctx, func(ctx context.Context) error {
		pg.AfterCommit(ctx, func() { ran++ })
		if ran != 0 {
			t.Fatal("ran before the commit")
		}
		return nil
	}); err != nil || ran != 1 {
		t.Fatalf("after a commit: ran %d, %v", ran, err)
	}
	_ = db.InTx(ctx, func(ctx context.Context) error {
		pg.AfterCommit(ctx, func() { ran++ })
		return errors.New("rolled back")
	})
	if ran != 1 {
		t.Fatalf("ran after a rollback: %d", ran)
	}
	pg.AfterCommit(ctx, func() { ran++ })
	if ran != 2 {
		t.Fatal("without a unit of work it did not run at once")
	}
}

// BeforeCommit runs in the unit of work after its body, in order, hooks
// added by a hook included; its error rolls everything back.
func TestBeforeCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, pg.Options{MaxConns: 2}, `CREATE TABLE t (n int)`)
	insert := func(n int) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := db.Conn(ctx).Exec(ctx, `INSERT INTO t VALUES ($1)`, n)
			return err
		}
	}
	var order []int
	err := db.InTx(ctx, func(ctx context.Context) error {
		if err := pg.BeforeCommit(ctx, func(ctx context.Context) error {
			order = append(order, 2)
			return errors.Join(insert(2)(ctx), pg.BeforeCommit(ctx, func(ctx context.Context) error {
				order = append(order, 3)
				return insert(3)(ctx)
			}))
		}); err != nil {
			return err
		}
		order = append(order, 1)
		return insert(1)(ctx)
	})
	if err != nil || len(order) != 3 || order[0] != 1 || order[1] != 2 || order[2] != 3 {
		t.Fatalf("order %v, %v", order, err)
	}
	failed := errors.New("refused")
	err = db.InTx(ctx, func(ctx context.Context) error {
		pg.AfterCommit(ctx, func() { t.Error("an after-commit hook ran after a failed before-commit hook") })
		if err := pg.BeforeCommit(ctx, func(ctx context.Context) error { return errors.Join(insert(5)(ctx), failed) }); err != nil {
			return err
		}
		return insert(4)(ctx)
	})
	if !errors.Is(err, failed) {
		t.Fatalf("InTx = %v, want the hook's error", err)
	}
	var rows int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("rows = %d (%v), want the first unit of work's 3", rows, err)
	}
	if err := pg.BeforeCommit(ctx, func(context.Context) error { return nil }); err == nil {
		t.Fatal("BeforeCommit outside a unit of work was accepted")
	}
	// A context kept past its commit cannot add to it.
	var kept context.Context
	if err := db.InTx(ctx, func(ctx context.Context) error { kept = ctx; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := pg.BeforeCommit(kept, func(context.Context) error { return nil }); err == nil {
		t.Fatal("BeforeCommit after the commit was accepted")
	}
	// A panicking hook rolls back and skips the after-commit hooks.
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the hook's panic did not propagate")
			}
		}()
		_ = db.InTx(ctx, func(ctx context.Context) error {
			pg.AfterCommit(ctx, func() { t.Error("an after-commit hook ran after a panicking before-commit hook") })
			if err := pg.BeforeCommit(ctx, func(context.Context) error { panic("boom") }); err != nil {
				return err
			}
			return insert(6)(ctx)
		})
	}()
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("rows = %d (%v) after a panicking hook, want 3", rows, err)
	}
}

// countedClose is batch results that count their closes.
type countedClose struct {
	pgx.BatchResults
	closes int
	err    error
}

func (c *countedClose) Close() error { c.closes++; return c.err }

// CloseOnce closes the batch once, however often it is asked, and answers
// every call with the first close's error; the pool's batches outside a
// unit of work come so wrapped, and a failed one closed twice does not
// touch its connection again.
func TestCloseOnce(t *testing.T) {
	inner := &countedClose{err: errors.New("commit refused")}
	br := pg.CloseOnce(pg.CloseOnce(inner))
	for range 3 {
		if err := br.Close(); err != inner.err {
			t.Fatalf("close: %v", err)
		}
	}
	if inner.closes != 1 {
		t.Fatalf("%d closes reached the batch", inner.closes)
	}

	db := pgtest.New(t)
	ctx := context.Background()
	b := &pgx.Batch{}
	b.Queue("SELECT 1/0")
	res := db.Conn(ctx).SendBatch(ctx, b)
	if _, err := res.Exec(); err == nil {
		t.Fatal("1/0 ran")
	}
	first := res.Close()
	if first == nil || res.Close() != first {
		t.Fatalf("closes: %v, then another answer", first)
	}
	// The connection went back once and still serves.
	var one int
	if err := db.Conn(ctx).QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after the failed batch: %v", err)
	}
}
