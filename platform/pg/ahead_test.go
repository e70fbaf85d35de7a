package pg_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/omlhub/oml/platform/pg"
)

const aheadSchema = `CREATE TABLE t (n int, s text);
INSERT INTO t SELECT g, CASE WHEN g % 2 = 0 THEN 'even' END FROM generate_series(1, 5) g`

// pair is one row of t.
type pair struct {
	N int
	S *string
}

// reads are three reads of t as sqlc writes them: many rows, one row,
// and one row then many (the second statement is not a first read).
type reads struct {
	db     *pg.DB
	above  []pair
	below  int
	second []pair
}

// many reads pairs as sqlc's code for a :many query does.
func many(ctx context.Context, q pg.Querier, sql string, arg int) ([]pair, error) {
	rows, err := q.Query(ctx, sql, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []pair
	for rows.Next() {
		var p pair
		if err := rows.Scan(&p.N, &p.S); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

const (
	aboveSQL = `SELECT n, s FROM t WHERE n > $1 ORDER BY n`
	belowSQL = `SELECT count(*) FROM t WHERE n < $1`
	pickSQL  = `SELECT n FROM t WHERE n = $1`
)

func (r *reads) fns(above, below, pick int) []func(ctx context.Context) error {
	return []func(ctx context.Context) error{
		func(ctx context.Context) (err error) {
			r.above, err = many(ctx, r.db.Conn(ctx), aboveSQL, above)
			return err
		},
		func(ctx context.Context) error {
			return r.db.Conn(ctx).QueryRow(ctx, belowSQL, below).Scan(&r.below)
		},
		func(ctx context.Context) (err error) {
			var n int
			if err := r.db.Conn(ctx).QueryRow(ctx, pickSQL, pick).Scan(&n); err != nil {
				return err
			}
			r.second, err = many(ctx, r.db.Conn(ctx), aboveSQL, n)
			return err
		},
	}
}

func str(s string) *string { return &s }

// tracedDB is a pool of one connection over t's rows, with what it sends
// traced from here on.
func tracedDB(t *testing.T) (*pg.DB, *roundTrips) {
	t.Helper()
	trips := &roundTrips{}
	db := openDB(t, pg.Options{MaxConns: 1, Tracer: trips}, aheadSchema)
	trips.take()
	return db, trips
}

// Together sends each fn's first read in one pipeline, with the BEGIN and
// what Later queued before them; the fns get the answers they would have
// had one after another (NULLs, no rows, a second statement of their own).
func TestTogetherSendsFirstReadsInOnePipeline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, trips := tracedDB(t)
	insert := `INSERT INTO t VALUES ($1, $2)`

	r := &reads{db: db}
	err := db.InTx(ctx, func(ctx context.Context) error {
		if _, err := db.Later(ctx, "insert").Exec(ctx, insert, 6, "six"); err != nil {
			return err
		}
		return db.Together(ctx, r.fns(3, 4, 4)...)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"batch[begin; " + insert + "; " + aboveSQL + "; " + belowSQL + "; " + pickSQL + "]",
		aboveSQL, "commit",
	}
	if got := trips.take(); !reflect.DeepEqual(got, want) {
		t.Fatalf("sent %q\nwant %q", got, want)
	}
	wantAbove := []pair{{4, str("even")}, {5, nil}, {6, str("six")}}
	if !reflect.DeepEqual(r.above, wantAbove) || r.below != 3 || !reflect.DeepEqual(r.second, wantAbove[1:]) {
		t.Fatalf("read %+v, %d, %+v", r.above, r.below, r.second)
	}

	// The same reads one after another, outside a unit of work: the same
	// answers, each statement alone.
	alone := &reads{db: db}
	if err := db.Together(ctx, alone.fns(3, 4, 4)...); err != nil {
		t.Fatal(err)
	}
	if got := trips.take(); len(got) != 4 {
		t.Fatalf("outside a unit of work sent %q", got)
	}
	if !reflect.DeepEqual(alone.above, r.above) || alone.below != r.below || !reflect.DeepEqual(alone.second, r.second) {
		t.Fatalf("alone read %+v, %d, %+v", alone.above, alone.below, alone.second)
	}

	// A read with no rows is pgx.ErrNoRows, as it would be.
	err = db.InTx(ctx, func(ctx context.Context) error {
		return db.Together(ctx, r.fns(0, 0, 99)...)
	})
	if !errors.Is(err, pgx.ErrNoRows) {
		t.Fatalf("a first read with no rows: %v", err)
	}
	if got := trips.take(); len(got) != 2 || got[0] != "batch[begin; "+aboveSQL+"; "+belowSQL+"; "+pickSQL+"]" || got[1] != "rollback" {
		t.Fatalf("sent %q", got)
	}
}

// A pipeline's result as pgx.Rows answers like pgx's own rows.
func TestTogetherRowsAnswerLikePgx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, pg.Options{MaxConns: 1}, aheadSchema)
	type seen struct {
		values [][]any
		raw    [][][]byte
		tag    string
		fields []string
	}
	look := func(ctx context.Context, out *seen) error {
		rows, err := db.Conn(ctx).Query(ctx, aboveSQL, 3)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				return err
			}
			out.values = append(out.values, v)
			var raw [][]byte
			for _, b := range rows.RawValues() {
				raw = append(raw, append([]byte(nil), b...))
			}
			out.raw = append(out.raw, raw)
		}
		for _, f := range rows.FieldDescriptions() {
			out.fields = append(out.fields, f.Name)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		out.tag = rows.CommandTag().String()
		return nil
	}
	var direct, ahead seen
	err := db.InTx(ctx, func(ctx context.Context) error {
		if err := look(ctx, &direct); err != nil {
			return err
		}
		var n int
		return db.Together(ctx,
			func(ctx context.Context) error { return look(ctx, &ahead) },
			func(ctx context.Context) error { return db.Conn(ctx).QueryRow(ctx, belowSQL, 3).Scan(&n) },
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(direct, ahead) {
		t.Fatalf("pgx's rows:   %+v\nahead's rows: %+v", direct, ahead)
	}
}

// A first statement that is not the one found beforehand, or not a read,
// runs as usual; a write is made once, not also while Together looks.
func TestTogetherRunsOtherFirstStatementsAsUsual(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, trips := tracedDB(t)
	runs := 0
	var first, below int
	err := db.InTx(ctx, func(ctx context.Context) error {
		return db.Together(ctx,
			func(ctx context.Context) error {
				runs++ // a different argument the second time
				return db.Conn(ctx).QueryRow(ctx, pickSQL, runs).Scan(&first)
			},
			func(ctx context.Context) error {
				_, err := db.Conn(ctx).Exec(ctx, `INSERT INTO t VALUES ($1, $2)`, 7, "seven")
				return err
			},
			func(ctx context.Context) error { return db.Conn(ctx).QueryRow(ctx, belowSQL, 100).Scan(&below) },
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The pipeline held the two first reads; the first fn's replay and
	// the insert ran alone. The count was read ahead of the insert.
	if got := trips.take(); len(got) != 4 || !strings.HasPrefix(got[0], "batch[begin; "+pickSQL+"; "+belowSQL+"]") ||
		got[1] != pickSQL || !strings.HasPrefix(got[2], "INSERT") || got[3] != "commit" {
		t.Fatalf("sent %q", got)
	}
	if first != 2 || below != 5 {
		t.Fatalf("read %d and %d", first, below)
	}
	if n := rowsOfT(t, db); n != 6 {
		t.Fatalf("%d rows, want 6: the insert ran once", n)
	}
}

// A read Postgres refuses is its fn's error, the fns after it are not
// run, nothing of the unit of work stays, and the pool's one connection
// is clean for the next.
func TestTogetherRefusedReadFailsItsFn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, pg.Options{MaxConns: 1}, aheadSchema)
	var ran []int
	err := db.InTx(ctx, func(ctx context.Context) error {
		if _, err := db.Later(ctx, "insert").Exec(ctx, `INSERT INTO t VALUES ($1, $2)`, 8, "eight"); err != nil {
			return err
		}
		var a, b, c int
		return db.Together(ctx,
			func(ctx context.Context) error {
				ran = append(ran, 1)
				return db.Conn(ctx).QueryRow(ctx, belowSQL, 3).Scan(&a)
			},
			func(ctx context.Context) error {
				ran = append(ran, 2)
				return db.Conn(ctx).QueryRow(ctx, `SELECT 1 / $1::int`, 0).Scan(&b)
			},
			func(ctx context.Context) error {
				ran = append(ran, 3)
				return db.Conn(ctx).QueryRow(ctx, belowSQL, 4).Scan(&c)
			},
		)
	})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("a refused read: %v", err)
	}
	// Each fn ran once to find its read, then the first two for real.
	if !reflect.DeepEqual(ran, []int{1, 2, 3, 1, 2}) {
		t.Fatalf("ran %v", ran)
	}
	if n := rowsOfT(t, db); n != 5 {
		t.Fatalf("%d rows, want 5: the queued insert was rolled back", n)
	}

	// A refused read whose fn ignores the error: the statements not
	// answered from the pipeline (the fn after it, the commit) fail with
	// that refusal, not 25P02, which would hide a deadlock's retry.
	var after error
	err = db.InTx(ctx, func(ctx context.Context) error {
		var b, c int
		_ = db.Together(ctx,
			func(ctx context.Context) error {
				_ = db.Conn(ctx).QueryRow(ctx, `SELECT 1 / $1::int`, 0).Scan(&b)
				return nil
			},
			func(ctx context.Context) error {
				after = db.Conn(ctx).QueryRow(ctx, belowSQL, 4).Scan(&c)
				return after
			},
		)
		return nil
	})
	if !errors.As(after, &pgErr) || pgErr.Code != "22012" || !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("after a refused read: %v, and the unit of work: %v", after, err)
	}
	// An earlier fn answered from the pipeline keeps its answer; its
	// second statement fails with the later read's refusal.
	var first, second error
	var a int
	err = db.InTx(ctx, func(ctx context.Context) error {
		var b int
		return db.Together(ctx,
			func(ctx context.Context) error {
				first = db.Conn(ctx).QueryRow(ctx, belowSQL, 3).Scan(&a)
				second = db.Conn(ctx).QueryRow(ctx, belowSQL, 4).Scan(&a)
				return second
			},
			func(ctx context.Context) error { return db.Conn(ctx).QueryRow(ctx, `SELECT 1 / $1::int`, 0).Scan(&b) },
		)
	})
	if first != nil || !errors.As(second, &pgErr) || pgErr.Code != "22012" || !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("an earlier fn: %v, then %v; the unit of work: %v", first, second, err)
	}
	if err := db.InTx(ctx, func(ctx context.Context) error {
		_, err := db.Conn(ctx).Exec(ctx, `INSERT INTO t VALUES ($1, $2)`, 9, "nine")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := rowsOfT(t, db); n != 6 {
		t.Fatalf("%d rows, want 6", n)
	}
}

// A pipeline pgx cannot send (the context is done) is Together's error,
// and no fn runs for real.
func TestTogetherUnsentPipelineIsItsError(t *testing.T) {
	t.Parallel()
	db := openDB(t, pg.Options{MaxConns: 1}, aheadSchema)
	ctx, cancel := context.WithCancel(context.Background())
	r := &reads{db: db}
	err := db.InTx(ctx, func(ctx context.Context) error {
		cancel()
		return db.Together(ctx, r.fns(1, 1, 1)...)
	})
	if !errors.Is(err, context.Canceled) || r.above != nil || r.below != 0 {
		t.Fatalf("a cancelled pipeline: %v (read %v, %d)", err, r.above, r.below)
	}
	if n := rowsOfT(t, db); n != 5 {
		t.Fatalf("%d rows", n)
	}
}

// Together inside a fn of Together: the inner one's pipeline comes first,
// and the outer read sent ahead is then not taken by a later statement.
func TestTogetherNested(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, trips := tracedDB(t)
	var a, b, c, d int
	err := db.InTx(ctx, func(ctx context.Context) error {
		return db.Together(ctx,
			func(ctx context.Context) error {
				if err := db.Together(ctx,
					func(ctx context.Context) error { return db.Conn(ctx).QueryRow(ctx, belowSQL, 2).Scan(&a) },
					func(ctx context.Context) error { return db.Conn(ctx).QueryRow(ctx, belowSQL, 3).Scan(&b) },
				); err != nil {
					return err
				}
				return db.Conn(ctx).QueryRow(ctx, belowSQL, 4).Scan(&c)
			},
			func(ctx context.Context) error { return db.Conn(ctx).QueryRow(ctx, belowSQL, 5).Scan(&d) },
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	if a != 1 || b != 2 || c != 3 || d != 4 {
		t.Fatalf("read %d %d %d %d", a, b, c, d)
	}
	// The outer fns were looked at with inner Togethers in order, so the
	// outer pipeline holds the first inner read and the second fn's.
	got := trips.take()
	if len(got) != 4 || got[0] != "batch[begin; "+belowSQL+"; "+belowSQL+"]" || got[len(got)-1] != "commit" {
		t.Fatalf("sent %q", got)
	}
}

// While Together looks for first reads, nothing joins the commit: a
// BeforeCommit fails, an AfterCommit hook is dropped, TxLocal is fresh.
// Each happens once, in the fn's real run.
func TestTogetherLooksWithoutEffects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, pg.Options{MaxConns: 1}, aheadSchema)
	type box struct{ n int }
	type key struct{}
	before, after := 0, 0
	var local *box
	err := db.InTx(ctx, func(ctx context.Context) error {
		var n int
		return db.Together(ctx,
			func(ctx context.Context) error {
				b := pg.TxLocal(ctx, key{}, func() *box { return &box{} })
				b.n++
				_ = pg.BeforeCommit(ctx, func(context.Context) error { before++; return nil }) // fails while looking
				pg.AfterCommit(ctx, func() { after++ })
				return db.Conn(ctx).QueryRow(ctx, belowSQL, 3).Scan(&n)
			},
			func(ctx context.Context) error {
				local = pg.TxLocal(ctx, key{}, func() *box { return &box{} })
				return db.Conn(ctx).QueryRow(ctx, belowSQL, 4).Scan(&n)
			},
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	if before != 1 || after != 1 || local == nil || local.n != 1 {
		t.Fatalf("before-commit hooks %d, after-commit %d, the unit's value %+v", before, after, local)
	}

	// A fn that panics on the failure its look gets still runs for real,
	// its read sent ahead with the others.
	traced, trips := tracedDB(t)
	var a, b int
	err = traced.InTx(ctx, func(ctx context.Context) error {
		return traced.Together(ctx,
			func(ctx context.Context) error {
				if err := traced.Conn(ctx).QueryRow(ctx, `SELECT $1::int`, 1).Scan(&a); err != nil {
					panic(err)
				}
				return nil
			},
			func(ctx context.Context) error { return traced.Conn(ctx).QueryRow(ctx, `SELECT $1::int`, 2).Scan(&b) },
		)
	})
	if got := trips.take(); err != nil || a != 1 || b != 2 || len(got) != 2 || !strings.HasPrefix(got[0], "batch[begin; ") {
		t.Fatalf("read %d and %d (%v); sent %q", a, b, err, got)
	}
}
