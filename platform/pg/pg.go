// Package pg owns the Postgres connection pool and the unit of work: a
// transaction carried in a context.Context, so that several bounded contexts
// commit together without pgx types in their ports.
package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/omlhub/oml/platform/auth"
)

// Querier is what sqlc-generated code runs on: a pool or a transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	// SendBatch sends several statements in one round trip.
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// DB is the process's pool plus the unit-of-work helpers.
type DB struct {
	Pool *pgxpool.Pool
}

// Options tune [Open].
type Options struct {
	MaxConns        int32
	ApplicationName string
	// Tracer sees every statement (tests count them); nil for none.
	Tracer pgx.QueryTracer
}

// Open connects a pool and checks the server answers. pgvector's types are
// registered on every new connection once the extension exists.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.ApplicationName != "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = opts.ApplicationName
	}
	if opts.Tracer != nil {
		cfg.ConnConfig.Tracer = opts.Tracer
	}
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		var present bool
		if err := conn.QueryRow(ctx, "SELECT to_regtype('vector') IS NOT NULL").Scan(&present); err != nil {
			return fmt.Errorf("look up vector type: %w", err)
		}
		if !present {
			// Before the first migration the extension does not exist yet.
			// A server started before `migrate` resets its pool once the
			// schema is current (see readiness in cmd/oml-server).
			return nil
		}
		return pgxvec.RegisterTypes(ctx, conn)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to postgres at %s: %w", cfg.ConnConfig.Host, err)
	}
	return &DB{Pool: pool}, nil
}

// Close closes the pool.
func (db *DB) Close() { db.Pool.Close() }

type txKey struct{}

// Conn returns the transaction carried by ctx, or the pool (Pooled).
func (db *DB) Conn(ctx context.Context) Querier {
	if t, ok := ctx.Value(txKey{}).(*tx); ok {
		return t
	}
	return db.Pooled()
}

// Later returns a Querier whose Exec, in the unit of work carried by ctx,
// does not send its statement at once: it goes in the pipeline of the
// unit of work's next statement, before it, or in the COMMIT's, which
// saves its round trip and keeps the order of statements. Postgres's
// refusal of it comes back, when that pipeline runs, as a QueuedError
// with label from the next statement or from InTx (nothing commits), so
// use it only
// for a statement whose caller would do nothing with its error but
// return it, and that reads nothing back (not even a count of rows: its
// tag is empty). A lock it takes is taken, and waited for, in that next
// round trip. Its arguments are encoded when it is sent, so they must not
// change until the unit of work ends. If a pipeline fails before
// Postgres could run it (a context already done, an argument pgx cannot
// encode), every later statement of the unit of work fails with that
// error and nothing commits, whatever the caller did with it. Query,
// QueryRow and SendBatch run at once, after what is queued. Without a
// unit of work it is Conn.
func (db *DB) Later(ctx context.Context, label string) Querier {
	if t, ok := ctx.Value(txKey{}).(*tx); ok {
		return later{t, label}
	}
	return db.Pooled()
}

// later is a unit of work whose Exec queues (DB.Later).
type later struct {
	*tx
	label string
}

func (l later) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if _, err := intercept(ctx, false, sql, args); err != nil {
		return pgconn.CommandTag{}, err
	}
	if err := l.runnable(); err != nil {
		return pgconn.CommandTag{}, err
	}
	if !pipelinable(true, args) {
		return pgconn.CommandTag{}, fmt.Errorf("pg: %s: a statement with no arguments or pgx options cannot wait for a pipeline", l.label)
	}
	l.tx.later = append(l.tx.later, queued{sql: sql, args: args, label: l.label})
	return pgconn.CommandTag{}, nil
}

// Pooled returns the pool as a Querier whose batches close once
// (CloseOnce).
func (db *DB) Pooled() Querier { return pooled{db.Pool} }

// pooled is the pool with its batches closed once.
type pooled struct{ *pgxpool.Pool }

func (p pooled) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return CloseOnce(p.Pool.SendBatch(ctx, b))
}

// CloseOnce makes br's Close run once; later calls return its first
// result. A pool's batch gives its connection back at the first Close, and
// pgx's Close of a failed batch touches the connection's statement caches
// on every call, so a second Close (a deferred one after an explicit one,
// or sqlc's Exec, which closes, followed by Close) would write the caches
// of a connection another goroutine may hold by then: a data race, and a
// concurrent map write that no recover catches.
func CloseOnce(br pgx.BatchResults) pgx.BatchResults {
	if _, ok := br.(*onceBatch); ok {
		return br
	}
	return &onceBatch{BatchResults: br}
}

type onceBatch struct {
	pgx.BatchResults
	closed bool
	err    error
}

func (o *onceBatch) Close() error {
	if !o.closed {
		o.closed = true
		o.err = o.BatchResults.Close()
	}
	return o.err
}

// InTx runs fn in a transaction carried by the context fn receives. A
// nested call joins the outer transaction. The outermost call retries fn
// (up to three times) when Postgres reports a serialization failure or a
// deadlock, so fn must keep no state across attempts.
func (db *DB) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{}).(*tx); ok {
		return fn(ctx)
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = db.runTx(ctx, pgx.TxOptions{}, fn)
		if !retryable(err) {
			return err
		}
	}
	return err
}

// InTxRequired reports whether ctx carries a transaction; helpers that must
// write in the caller's transaction (journal, idempotency) refuse otherwise.
func InTxRequired(ctx context.Context) error {
	if _, ok := ctx.Value(txKey{}).(*tx); !ok {
		return errors.New("pg: called outside a unit of work (use DB.InTx)")
	}
	return nil
}

// InSnapshot runs fn in a read-only REPEATABLE READ transaction: every
// statement fn makes sees the same snapshot, so multi-statement reads
// (a chain verification, say) are consistent while writers go on.
func (db *DB) InSnapshot(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{}).(*tx); ok {
		return fn(ctx)
	}
	return db.runTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

func (db *DB) runTx(ctx context.Context, opts pgx.TxOptions, fn func(ctx context.Context) error) (err error) {
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	t := &tx{conn: conn, opts: opts}
	// Roll back unconditionally (a no-op after a commit): an error or a
	// panic in fn must never send the connection back to the pool
	// mid-transaction, and a cancelled ctx must not stop the rollback.
	defer t.rollback(ctx)
	// Each attempt reads the caller's memoized state (its grants) anew,
	// inside its own transaction.
	hooks := &unit{}
	txCtx := context.WithValue(context.WithValue(auth.FreshMemo(ctx), txKey{}, t), unitKey{}, hooks)
	if err := fn(txCtx); err != nil {
		return err
	}
	if err := hooks.runBefore(txCtx); err != nil {
		return err
	}
	if err := t.commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	hooks.runAfter()
	return nil
}

func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// IsUniqueViolation reports whether err is a unique violation, optionally of
// the named constraint; a queued statement's (QueuedError) is never one.
func IsUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return !isQueued(err) && errors.As(err, &pgErr) && pgErr.Code == "23505" && (constraint == "" || pgErr.ConstraintName == constraint)
}

// IsNoRows reports whether err is pgx's no-rows error.
func IsNoRows(err error) bool { return !isQueued(err) && errors.Is(err, pgx.ErrNoRows) }

// IsCode reports whether err is a Postgres error with the SQLSTATE code,
// not a queued statement's (QueuedError).
func IsCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return !isQueued(err) && errors.As(err, &pgErr) && pgErr.Code == code
}

// QueuedError is Postgres's refusal of a statement DB.Later queued, as the
// statement it went with (or the commit) reports it. IsUniqueViolation,
// IsCode and IsNoRows answer false for it, so that no caller of that
// statement takes it for its own (a conflict to answer, a row not found)
// and carries on; errors.As still finds the *pgconn.PgError, so InTx
// retries a deadlock or a serialization failure.
type QueuedError struct {
	Label string // what DB.Later was told
	Err   error
}

func (e *QueuedError) Error() string { return e.Label + ": " + e.Err.Error() }
func (e *QueuedError) Unwrap() error { return e.Err }

func isQueued(err error) bool {
	var q *QueuedError
	return errors.As(err, &q)
}

// unit holds what runs as a unit of work commits ([BeforeCommit]) and
// once it has ([AfterCommit]), and what helpers keep for the length of it
// ([TxLocal]).
type unit struct {
	before []func(context.Context) error
	fns    []func()
	vals   map[any]any
	ended  bool // the before-commit hooks have run: nothing more can join the commit
}

// runBefore runs the before-commit hooks in the order they were added,
// hooks added by a hook included; the first error stops the commit.
func (a *unit) runBefore(ctx context.Context) error {
	for i := 0; i < len(a.before); i++ {
		if err := a.before[i](ctx); err != nil {
			return err
		}
	}
	a.ended = true
	return nil
}

type unitKey struct{}

func (a *unit) runAfter() {
	for _, fn := range a.fns {
		fn()
	}
}

// AfterCommit runs fn once the unit of work carried by ctx commits (never
// when it rolls back); without one it runs fn at once. In-process caches
// use it to forget what a write changes exactly when the write is seen.
func AfterCommit(ctx context.Context, fn func()) {
	if recording(ctx) {
		return // Together's look for a first read: nothing commits
	}
	if a, ok := ctx.Value(unitKey{}).(*unit); ok {
		a.fns = append(a.fns, fn)
		return
	}
	fn()
}

// BeforeCommit runs fn in the unit of work carried by ctx once its body
// has returned without error, as its last statements before COMMIT; an
// error from fn rolls the unit of work back and is returned by InTx. What
// fn writes is ordered after everything the unit of work read or waited
// for. Without a unit of work it returns an error.
func BeforeCommit(ctx context.Context, fn func(ctx context.Context) error) error {
	if recording(ctx) {
		return errRecording
	}
	a, ok := ctx.Value(unitKey{}).(*unit)
	if !ok {
		return errors.New("pg: BeforeCommit outside a unit of work (use DB.InTx)")
	}
	if a.ended {
		// A context kept past its commit (a goroutine, an after-commit
		// hook): what fn would write could never be part of it.
		return errors.New("pg: BeforeCommit after the unit of work has committed")
	}
	a.before = append(a.before, fn)
	return nil
}

// TxLocal returns the value kept under key for the unit of work carried by
// ctx, made by mk on first use; each attempt of a unit of work starts
// without one. Without a unit of work it returns a fresh mk().
func TxLocal[T any](ctx context.Context, key any, mk func() *T) *T {
	a, ok := ctx.Value(unitKey{}).(*unit)
	if !ok || recording(ctx) {
		return mk()
	}
	if v, ok := a.vals[key].(*T); ok {
		return v
	}
	if a.vals == nil {
		a.vals = map[any]any{}
	}
	v := mk()
	a.vals[key] = v
	return v
}
