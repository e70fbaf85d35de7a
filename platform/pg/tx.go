package pg

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// tx is a unit of work's transaction on one pooled connection. Its BEGIN
// goes in the same round trip as its first statement (pgx's
// Batch.BeginTx: a pipeline of the two), not in one of its own, and a
// unit of work that makes no statement sends neither BEGIN nor COMMIT.
// A write pays about one round trip in ten for its BEGIN otherwise
// (docs/BENCHMARKS.md, "BEGIN with the first statement").
//
// BEGIN comes first in the pipeline, so the statement after it runs in
// the transaction whatever it is; if it fails, Postgres skips the rest of
// the pipeline and the transaction is aborted, which rollback ends. A
// connection given back in a transaction (a failed ROLLBACK, a cancelled
// context) is closed by the pool, never reused.
//
// A statement queued with [DB.Later] waits for the next one and goes in
// its pipeline, or in the COMMIT's: the same order, one round trip fewer.
type tx struct {
	conn  *pgxpool.Conn
	opts  pgx.TxOptions
	ptx   pgx.Tx   // once the first statement has been sent
	later []queued // sent before the next statement, in order
	lost  error    // why queued statements may not have run: every later use fails with it
	// aborted is a read Together sent ahead that Postgres refused: the
	// transaction is aborted, and every statement not answered from that
	// pipeline, the commit included, fails with it (not with 25P02, which
	// would hide a deadlock InTx retries).
	aborted error
	done    bool // committed or rolled back
}

// queued is a statement of [DB.Later]'s, with what its error is labelled.
type queued struct {
	sql   string
	args  []any
	label string
}

// errTxDone is a statement on a unit of work that has ended.
var errTxDone = errors.New("pg: statement on a unit of work that has ended")

// pipelinable reports whether a statement goes in a pipeline as it would
// alone. Not one with pgx's query options (an exec mode, result formats),
// which a batch drops, nor an Exec with no arguments, which pgx sends over
// the simple protocol (where a string may hold several statements).
func pipelinable(exec bool, args []any) bool {
	if exec && len(args) == 0 {
		return false
	}
	for _, a := range args {
		switch a.(type) {
		case pgx.QueryExecMode, pgx.QueryResultFormats, pgx.QueryResultFormatsByOID:
			return false
		}
	}
	return true
}

// send sends, in one pipeline, what must go before the next statement
// (the BEGIN of a transaction not yet begun, statements Later queued) and
// the statements queue puts in, and reads the results of the former; the
// caller reads the rest. The first of those to fail fails the pipeline
// (Postgres skips what follows it), with Later's label for a queued one.
// An argument pgx cannot encode fails here, after the BEGIN was queued:
// pgx then closes the connection, and the unit of work fails with the
// encoding error (a reconnect, where a transaction begun alone would go
// on).
func (t *tx) send(ctx context.Context, queue func(b *pgx.Batch)) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	begin := t.ptx == nil
	if begin {
		b.BeginTx(t.opts)
	}
	later := t.later
	t.later = nil
	for _, q := range later {
		b.Queue(q.sql, q.args...)
	}
	queue(b)
	var br pgx.BatchResults
	if begin {
		br = CloseOnce(t.conn.SendBatch(ctx, b))
		// Tx is available at once, so that rollback can end it whatever
		// happens next; it is used only after br is closed.
		t.ptx = br.Tx()
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			if len(later) > 0 {
				t.lost = err
			}
			return nil, err
		}
	} else {
		br = CloseOnce(t.ptx.SendBatch(ctx, b))
	}
	for _, q := range later {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			// The label is the queued statement's only when Postgres
			// refused it; pgx fails a whole pipeline it could not send
			// (a statement it could not prepare or encode, a context
			// already done) at its first result.
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) {
				err = &QueuedError{Label: q.label, Err: err}
			}
			// The transaction may still be open and well with queued
			// writes lost: nothing more runs on it, the commit included,
			// whatever the caller does with this error.
			t.lost = err
			return nil, err
		}
	}
	return br, nil
}

// start readies a statement: nil results when it goes on t.ptx, else
// the results of the pipeline that sends it after what must go first
// (the BEGIN, statements Later queued), which start has read.
//
// A statement a pipeline would change (see pipelinable) goes on t.ptx.
// What must go before it is sent first, in a round trip of its own: the
// queued statements (with the BEGIN if need be), or else the BEGIN alone.
func (t *tx) start(ctx context.Context, exec bool, args []any, queue func(b *pgx.Batch)) (pgx.BatchResults, error) {
	if err := t.runnable(); err != nil {
		return nil, err
	}
	if pipelinable(exec, args) {
		if t.ptx != nil && len(t.later) == 0 {
			return nil, nil
		}
		return t.send(ctx, queue)
	}
	switch {
	case len(t.later) > 0:
		br, err := t.send(ctx, func(*pgx.Batch) {})
		if err != nil {
			return nil, err
		}
		return nil, br.Close()
	case t.ptx == nil:
		ptx, err := t.conn.BeginTx(ctx, t.opts)
		if err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
		t.ptx = ptx
	}
	return nil, nil
}

func (t *tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if _, err := intercept(ctx, false, sql, args); err != nil {
		return pgconn.CommandTag{}, err
	}
	br, err := t.start(ctx, true, args, func(b *pgx.Batch) { b.Queue(sql, args...) })
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	if br == nil {
		return t.ptx.Exec(ctx, sql, args...)
	}
	defer br.Close()
	tag, err := br.Exec()
	if err != nil {
		return tag, err
	}
	return tag, br.Close()
}

func (t *tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if r, err := intercept(ctx, true, sql, args); err != nil {
		return errRows{err}, err
	} else if r != nil {
		if err := t.usable(); err != nil {
			return errRows{err}, err
		}
		return &aheadRows{read: r, m: t.conn.Conn().TypeMap()}, nil
	}
	br, err := t.start(ctx, false, args, func(b *pgx.Batch) { b.Queue(sql, args...) })
	if err != nil {
		return errRows{err}, err
	}
	if br == nil {
		return t.ptx.Query(ctx, sql, args...)
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return errRows{err}, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (t *tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if r, err := intercept(ctx, true, sql, args); err != nil {
		return errRow{err}
	} else if r != nil {
		if err := t.usable(); err != nil {
			return errRow{err}
		}
		return aheadRow{&aheadRows{read: r, m: t.conn.Conn().TypeMap()}}
	}
	br, err := t.start(ctx, false, args, func(b *pgx.Batch) { b.Queue(sql, args...) })
	if err != nil {
		return errRow{err}
	}
	if br == nil {
		return t.ptx.QueryRow(ctx, sql, args...)
	}
	return batchRow{br.QueryRow(), br}
}

func (t *tx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if _, err := intercept(ctx, false, "", nil); err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	br, err := t.start(ctx, false, nil, func(withBegin *pgx.Batch) {
		withBegin.QueuedQueries = append(withBegin.QueuedQueries, b.QueuedQueries...)
	})
	switch {
	case err != nil:
		return pgx.FailedBatchResults(b, err)
	case br == nil:
		return CloseOnce(t.ptx.SendBatch(ctx, b))
	}
	return br
}

// commit ends the transaction and gives the connection back at once, so
// that what runs after the commit (AfterCommit's hooks: the journal's
// sequencer pass, say) never waits for a second connection while this
// one is held. Statements Later queued go in one pipeline with the
// COMMIT. A transaction that never began, with nothing queued, has
// nothing to commit. An aborted one answers pgx.ErrTxCommitRollback, or
// with statements queued the first one's error (25P02: the transaction
// is aborted); one whose queued statements may have been lost (t.lost)
// rolls back with that error, as does one Together's refused read
// aborted (t.aborted).
func (t *tx) commit(ctx context.Context) error {
	if t.done {
		return errTxDone
	}
	var err error
	switch {
	case t.lost != nil:
		err = t.lost
	case t.aborted != nil:
		err = t.aborted
	case len(t.later) > 0:
		err = t.commitPipelined(ctx)
	case t.ptx != nil:
		err = t.ptx.Commit(ctx)
	}
	t.end(ctx)
	return err
}

// commitPipelined sends the statements Later queued and the COMMIT in one
// pipeline (after a BEGIN, if nothing began the transaction). pgx's Tx
// does not see this COMMIT; end asks the connection instead.
func (t *tx) commitPipelined(ctx context.Context) error {
	br, err := t.send(ctx, func(b *pgx.Batch) { b.Queue("commit") })
	if err != nil {
		return err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && tag.String() == "ROLLBACK" {
		err = pgx.ErrTxCommitRollback
	}
	return err
}

// rollback ends a transaction that has not ended (a no-op after commit)
// and gives the connection back.
func (t *tx) rollback(ctx context.Context) {
	if !t.done {
		t.end(ctx)
	}
}

// end rolls back what is still open and releases the connection: a
// ROLLBACK only when the connection is in a transaction (pgx's Tx may
// not know of a pipelined COMMIT). pgx closes a connection whose
// ROLLBACK fails, and the pool closes one given back in a transaction.
func (t *tx) end(ctx context.Context) {
	if t.ptx != nil && t.conn.Conn().PgConn().TxStatus() != 'I' {
		_ = t.ptx.Rollback(context.WithoutCancel(ctx)) // ErrTxClosed after pgx's own commit
	}
	t.later = nil
	t.done = true
	t.conn.Release()
}

// batchRows are a pipeline's rows: closing them (or reading past the
// last) reads the rest of the pipeline, so the connection is free again.
type batchRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if r.br != nil {
		r.err = r.br.Close()
		r.br = nil
	}
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// batchRow is pgx's QueryRow of a pipeline (no row is pgx.ErrNoRows);
// Scan reads the rest of the pipeline, so the connection is free again.
type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// errRows are the rows of a query that failed before it returned any,
// non-nil as pgx's are: Next is false and Err the failure.
type errRows struct{ err error }

func (r errRows) Close()                                       {}
func (r errRows) Err() error                                   { return r.err }
func (r errRows) CommandTag() pgconn.CommandTag                { return pgconn.CommandTag{} }
func (r errRows) FieldDescriptions() []pgconn.FieldDescription { return nil }
func (r errRows) Next() bool                                   { return false }
func (r errRows) Scan(...any) error                            { return r.err }
func (r errRows) Values() ([]any, error)                       { return nil, r.err }
func (r errRows) RawValues() [][]byte                          { return nil }
func (r errRows) Conn() *pgx.Conn                              { return nil }
func (r errRows) TypeMap() *pgtype.Map                         { return nil }
