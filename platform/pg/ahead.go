package pg

import (
	"context"
	"errors"
	"reflect"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// Together runs fns one after another, as
//
//	for _, fn := range fns {
//		if err := fn(ctx); err != nil {
//			return err
//		}
//	}
//
// would, but in the unit of work carried by ctx the first read each fn
// makes (a Query or QueryRow) is sent ahead of them all, in one pipeline:
// reads from several bounded contexts that do not depend on each other
// cost one round trip instead of one each.
//
// It finds those reads by running each fn once beforehand with a context
// on which every statement fails (nothing is sent, nothing queued) and
// keeping the first; what fn answers there, a panic included, is dropped. On that context BeforeCommit fails too, AfterCommit
// drops its hook and TxLocal gives a fresh value, so that a journal
// append, say, is not made twice; in-process state of a fn's own is its
// to keep out of that run. When fn then runs for real, a first statement
// with the same SQL and arguments is answered from the pipeline's result;
// any other first statement, and every statement after it, runs as usual.
//
// So each fn must be a read: free of effects but its statements (it runs
// twice), on one goroutine, with arguments that do not change between
// the two runs, and making no write that a later fn's first read should
// see (those reads ran before it). Only first reads move: a fn's later
// statements run after every fn's first read, and a Together inside a fn
// sends a pipeline of its own (the outer read kept for that fn is then
// not used). A result is held in memory until its fn reads it.
//
// A read Postgres refuses is that fn's error, as it would have been. The
// transaction is then aborted, and every statement not answered from the
// pipeline (an earlier fn's second, a later fn's first) and the commit
// fail with that refusal, not with 25P02, so a deadlock is still retried.
// A pipeline pgx could not send is Together's error. Without a unit of
// work, fns simply run in order.
func (db *DB) Together(ctx context.Context, fns ...func(ctx context.Context) error) error {
	outer, _ := ctx.Value(togetherKey{}).(*fnState)
	if outer != nil && !outer.looking {
		outer.past = true // what this Together sends comes before the read kept for outer
	}
	t, ok := ctx.Value(txKey{}).(*tx)
	if !ok || len(fns) < 2 || outer != nil && outer.looking {
		return inOrder(ctx, fns)
	}
	reads := make([]*aheadRead, len(fns))
	n := 0
	for i, fn := range fns {
		if reads[i] = look(ctx, fn); reads[i] != nil {
			n++
		}
	}
	if n < 2 {
		return inOrder(ctx, fns)
	}
	if err := t.sendAhead(ctx, reads); err != nil {
		return err
	}
	for i, fn := range fns {
		fctx := ctx
		if reads[i] != nil {
			fctx = context.WithValue(ctx, togetherKey{}, &fnState{read: reads[i]})
		}
		if err := fn(fctx); err != nil {
			return err
		}
	}
	return nil
}

func inOrder(ctx context.Context, fns []func(ctx context.Context) error) error {
	for _, fn := range fns {
		if err := fn(ctx); err != nil {
			return err
		}
	}
	return nil
}

// look runs fn on a context where every statement fails and returns its
// first read, if it made one. What fn answers there is not its answer,
// a panic included: fn runs for real next, and panics there if it would.
func look(ctx context.Context, fn func(ctx context.Context) error) (read *aheadRead) {
	f := &fnState{looking: true}
	defer func() {
		_ = recover()
		read = f.read
	}()
	_ = fn(context.WithValue(ctx, togetherKey{}, f))
	return f.read
}

// errRecording is every statement's answer while Together looks for a
// fn's first read.
var errRecording = errors.New("pg: statement not run: Together is looking for the first read")

type togetherKey struct{}

// fnState is one fn's part in Together. While Together looks, the fn's
// first statement is kept in read if it is a read. When the fn runs for
// real, read's result may answer its first statement.
type fnState struct {
	looking bool
	read    *aheadRead
	past    bool // the fn made a statement (or a Together of its own): the next is not its first
}

// aheadRead is a read sent ahead and, once the pipeline ran, its result.
type aheadRead struct {
	sql  string
	args []any
	ran  bool // Postgres answered it (rows and err hold the answer)
	err  error
	tag  pgconn.CommandTag
	fds  []pgconn.FieldDescription
	rows [][][]byte
}

// recording reports whether ctx is Together's look for first reads.
func recording(ctx context.Context) bool {
	f, ok := ctx.Value(togetherKey{}).(*fnState)
	return ok && f.looking
}

// intercept is what Together makes of a statement: while it looks, the
// statement is kept if it is a fn's first read, and fails; when the fn
// runs for real, its first statement takes the read sent ahead if it is
// the same. It answers nil, nil for a statement that runs as usual.
func intercept(ctx context.Context, read bool, sql string, args []any) (*aheadRead, error) {
	f, ok := ctx.Value(togetherKey{}).(*fnState)
	if !ok {
		return nil, nil
	}
	first := !f.past
	f.past = true
	if f.looking {
		if first && read && pipelinable(false, args) {
			f.read = &aheadRead{sql: sql, args: args}
		}
		return nil, errRecording
	}
	r := f.read
	if !first || !read || r == nil || !r.ran || sql != r.sql || !reflect.DeepEqual(args, r.args) {
		return nil, nil
	}
	return r, nil
}

// sendAhead sends the reads (nil for a fn without one) in one pipeline,
// after what must go first (see send), and keeps each one's result.
func (t *tx) sendAhead(ctx context.Context, reads []*aheadRead) error {
	if err := t.runnable(); err != nil {
		return err
	}
	br, err := t.send(ctx, func(b *pgx.Batch) {
		for _, r := range reads {
			if r != nil {
				b.Queue(r.sql, r.args...)
			}
		}
	})
	if err != nil {
		return err
	}
	refused := false
	for _, r := range reads {
		if r == nil {
			continue
		}
		if refused {
			break // Postgres skipped the rest of the pipeline
		}
		if err := r.take(br); err != nil {
			_ = br.Close()
			return err
		}
		if r.err != nil {
			refused, t.aborted = true, r.err
		}
	}
	if err := br.Close(); err != nil && !refused {
		return err
	}
	return nil
}

// take reads the read's result from br. A Postgres refusal is the read's
// own answer; any other failure (the connection's) is take's error.
func (r *aheadRead) take(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err == nil {
		r.fds = append([]pgconn.FieldDescription(nil), rows.FieldDescriptions()...)
		for rows.Next() {
			raw := rows.RawValues()
			row := make([][]byte, len(raw))
			for i, v := range raw {
				if v != nil {
					row[i] = append(make([]byte, 0, len(v)), v...)
				}
			}
			r.rows = append(r.rows, row)
		}
		rows.Close()
		err = rows.Err()
		r.tag = rows.CommandTag()
	}
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
	case errors.As(err, &pgErr):
		r.err = err
	default:
		return err
	}
	r.ran = true
	return nil
}

// aheadRows are a read's result as pgx.Rows.
type aheadRows struct {
	read   *aheadRead
	m      *pgtype.Map
	i      int // the current row, 1-based; 0 before the first Next
	err    error
	closed bool
}

func (r *aheadRows) Close() { r.closed = true }

func (r *aheadRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.read.err
}

func (r *aheadRows) CommandTag() pgconn.CommandTag { return r.read.tag }

func (r *aheadRows) FieldDescriptions() []pgconn.FieldDescription { return r.read.fds }

func (r *aheadRows) Next() bool {
	if r.closed || r.Err() != nil || r.i >= len(r.read.rows) {
		r.closed = true
		return false
	}
	r.i++
	return true
}

func (r *aheadRows) current() ([][]byte, error) {
	if r.closed || r.i == 0 {
		return nil, errors.New("pg: no current row (call Next; rows close after the last)")
	}
	return r.read.rows[r.i-1], nil
}

func (r *aheadRows) Scan(dest ...any) error {
	row, err := r.current()
	if err == nil {
		err = pgx.ScanRow(r.m, r.read.fds, row, dest...)
	}
	if err != nil {
		r.err = err
	}
	return err
}

func (r *aheadRows) Values() ([]any, error) {
	row, err := r.current()
	if err != nil {
		return nil, err
	}
	out := make([]any, len(row))
	for i, buf := range row {
		fd := r.read.fds[i]
		switch dt, ok := r.m.TypeForOID(fd.DataTypeOID); {
		case buf == nil:
		case ok:
			if out[i], err = dt.Codec.DecodeValue(r.m, fd.DataTypeOID, fd.Format, buf); err != nil {
				return nil, err
			}
		case fd.Format == pgx.TextFormatCode:
			out[i] = string(buf)
		default:
			out[i] = append([]byte(nil), buf...)
		}
	}
	return out, nil
}

func (r *aheadRows) RawValues() [][]byte {
	row, _ := r.current()
	return row
}

func (r *aheadRows) Conn() *pgx.Conn { return nil }

func (r *aheadRows) TypeMap() *pgtype.Map { return r.m }

// usable is nil while a statement may run on the unit of work: not once
// it has ended or lost queued statements. A statement answered from
// Together's pipeline checks this.
func (t *tx) usable() error {
	switch {
	case t.done:
		return errTxDone
	case t.lost != nil:
		return t.lost
	}
	return nil
}

// runnable is usable, and not after a read Together sent ahead aborted
// the transaction: every statement sent to Postgres checks this.
func (t *tx) runnable() error {
	if err := t.usable(); err != nil {
		return err
	}
	return t.aborted
}

// aheadRow is a read's result as pgx.Row: its first row.
type aheadRow struct{ rows *aheadRows }

func (r aheadRow) Scan(dest ...any) error {
	if err := r.rows.Err(); err != nil {
		return err
	}
	if !r.rows.Next() {
		return pgx.ErrNoRows
	}
	return r.rows.Scan(dest...)
}
