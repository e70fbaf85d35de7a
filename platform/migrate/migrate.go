// Package migrate applies OML's numbered SQL migrations, one transaction per
// file, under a Postgres advisory lock so that replicas starting together
// apply each file exactly once.
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lockID is the advisory lock key; any constant works as long as every
// replica uses the same one.
const lockID int64 = 0x6f6d6c5f6d696772 // "oml_migr"

var fileName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.(up|down)\.sql$`)

// Migration is one numbered step.
type Migration struct {
	Version int
	Name    string
	Up      string
	Down    string
}

// Load reads migrations from fsys and checks their numbering is dense.
func Load(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	byVersion := map[int]*Migration{}
	for _, e := range entries {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		v, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		mig := byVersion[v]
		if mig == nil {
			mig = &Migration{Version: v, Name: m[2]}
			byVersion[v] = mig
		}
		if mig.Name != m[2] {
			return nil, fmt.Errorf("migration %04d has two names: %s and %s", v, mig.Name, m[2])
		}
		if m[3] == "up" {
			mig.Up = string(body)
		} else {
			mig.Down = string(body)
		}
	}
	out := make([]Migration, 0, len(byVersion))
	for _, m := range byVersion {
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration numbering has a gap before %04d_%s", m.Version, m.Name)
		}
		if m.Up == "" {
			return nil, fmt.Errorf("migration %04d_%s has no .up.sql", m.Version, m.Name)
		}
	}
	return out, nil
}

// Runner applies migrations to one database.
type Runner struct {
	pool       *pgxpool.Pool
	migrations []Migration
}

// New returns a runner for the migrations in fsys.
func New(pool *pgxpool.Pool, fsys fs.FS) (*Runner, error) {
	ms, err := Load(fsys)
	if err != nil {
		return nil, err
	}
	return &Runner{pool: pool, migrations: ms}, nil
}

// Latest is the highest known version.
func (r *Runner) Latest() int { return len(r.migrations) }

const ensureTable = `CREATE TABLE IF NOT EXISTS public.oml_schema_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// Current returns the highest applied version (0 when none).
func (r *Runner) Current(ctx context.Context) (int, error) {
	var v int
	err := r.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM public.oml_schema_migrations`).Scan(&v)
	if err != nil {
		var exists bool
		if err2 := r.pool.QueryRow(ctx, `SELECT to_regclass('public.oml_schema_migrations') IS NOT NULL`).Scan(&exists); err2 == nil && !exists {
			return 0, nil
		}
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// Up applies every pending migration and returns the versions applied.
func (r *Runner) Up(ctx context.Context) ([]int, error) {
	var applied []int
	err := r.locked(ctx, func(conn *pgx.Conn) error {
		current, err := r.current(ctx, conn)
		if err != nil {
			return err
		}
		for _, m := range r.migrations[current:] {
			if err := apply(ctx, conn, m.Version, m.Name, m.Up, true); err != nil {
				return err
			}
			applied = append(applied, m.Version)
		}
		return nil
	})
	return applied, err
}

// Down reverts the newest steps migrations.
func (r *Runner) Down(ctx context.Context, steps int) ([]int, error) {
	var reverted []int
	err := r.locked(ctx, func(conn *pgx.Conn) error {
		current, err := r.current(ctx, conn)
		if err != nil {
			return err
		}
		for v := current; v > 0 && len(reverted) < steps; v-- {
			m := r.migrations[v-1]
			if m.Down == "" {
				return fmt.Errorf("migration %04d_%s has no .down.sql", m.Version, m.Name)
			}
			if err := apply(ctx, conn, m.Version, m.Name, m.Down, false); err != nil {
				return err
			}
			reverted = append(reverted, v)
		}
		return nil
	})
	return reverted, err
}

func (r *Runner) locked(ctx context.Context, fn func(*pgx.Conn) error) error {
	conn, err := r.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockID); err != nil {
		return fmt.Errorf("take migration lock: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockID) }()
	if _, err := conn.Exec(ctx, ensureTable); err != nil {
		return fmt.Errorf("create migrations table: %w", err)
	}
	return fn(conn.Conn())
}

func (r *Runner) current(ctx context.Context, conn *pgx.Conn) (int, error) {
	var v int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM public.oml_schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if v > len(r.migrations) {
		return 0, fmt.Errorf("database is at version %d, newer than this binary's %d", v, len(r.migrations))
	}
	return v, nil
}

func apply(ctx context.Context, conn *pgx.Conn, version int, name, body string, up bool) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// No arguments: pgx sends the file with the simple protocol, so it may
	// hold several statements.
	if _, err := tx.Exec(ctx, body); err != nil {
		return fmt.Errorf("migration %04d_%s: %w", version, name, err)
	}
	if up {
		_, err = tx.Exec(ctx, `INSERT INTO public.oml_schema_migrations (version, name) VALUES ($1, $2)`, version, name)
	} else {
		_, err = tx.Exec(ctx, `DELETE FROM public.oml_schema_migrations WHERE version = $1`, version)
	}
	if err != nil {
		return fmt.Errorf("record migration %04d: %w", version, err)
	}
	return tx.Commit(ctx)
}
