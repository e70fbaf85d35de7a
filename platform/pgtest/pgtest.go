// Package pgtest gives tests their own Postgres database: a clone of a
// migrated template, dropped when the test ends. The server comes from
// OML_TEST_DATABASE_URL, which `make test` sets after starting its private
// cluster; a test without it fails, it never skips.
package pgtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/migrate"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/sql/migrations"
)

// EnvURL names the variable holding the test server's connection string.
const EnvURL = "OML_TEST_DATABASE_URL"

// URL returns the test server's connection string or fails t.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Fatalf("%s is not set: run the tests with `make test`, which starts Postgres (scripts/pg.sh)", EnvURL)
	}
	return u
}

// EmptyURL creates a fresh database with no migrations applied (for
// migration tests); it is dropped when t ends.
func EmptyURL(t testing.TB) string {
	t.Helper()
	return create(t, "")
}

// NewURL creates a fresh migrated database and returns its connection
// string; the database is dropped when t ends.
func NewURL(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmpl, err := template(ctx, URL(t))
	if err != nil {
		t.Fatalf("pgtest: template database: %v", err)
	}
	return create(t, tmpl)
}

// create makes a database (a clone of tmpl, or empty) dropped at cleanup.
func create(t testing.TB, tmpl string) string {
	t.Helper()
	base := URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := "oml_t_" + strings.ToLower(ids.Suffix(ids.New(ids.Request)))
	err := adminExec(ctx, base, func(c *pgx.Conn) error {
		if tmpl == "" {
			_, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
			return err
		}
		return clone(ctx, c, tmpl, name)
	})
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := adminExec(ctx, base, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			return err
		})
		if err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
		}
	})
	return withDatabase(base, name)
}

// New returns a pool on a fresh migrated database, closed and dropped
// when t ends.
func New(t testing.TB) *pg.DB {
	t.Helper()
	u := NewURL(t)
	// OML_TEST_DB_MAX_CONNS=1 finds code that holds one connection while
	// it waits for another: it stalls (docs/OPERATIONS.md, "Sizing the
	// pool"). Tests that hold transactions open in several goroutines on
	// purpose stall too.
	n := int32(16)
	if v := os.Getenv("OML_TEST_DB_MAX_CONNS"); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil || i < 1 {
			t.Fatalf("pgtest: OML_TEST_DB_MAX_CONNS: want a number ≥ 1, got %q", v)
		}
		n = int32(i)
	}
	db, err := pg.Open(context.Background(), u, pg.Options{MaxConns: n, ApplicationName: "oml-test"})
	if err != nil {
		t.Fatalf("pgtest: open: %v", err)
	}
	t.Cleanup(db.Close) // runs before the drop registered above
	return db
}

// Keep opens the database at url, kept between runs (a benchmark's loaded
// corpus, say), and migrates it to the current schema; the pool closes
// when t ends and the database stays.
func Keep(t testing.TB, url string) *pg.DB {
	t.Helper()
	ctx := context.Background()
	db, err := pg.Open(ctx, url, pg.Options{MaxConns: 32, ApplicationName: "oml-test"})
	if err != nil {
		t.Fatalf("pgtest: open: %v", err)
	}
	t.Cleanup(db.Close)
	if err := migrateUp(ctx, db); err != nil {
		t.Fatalf("pgtest: migrate: %v", err)
	}
	return db
}

func migrateUp(ctx context.Context, db *pg.DB) error {
	runner, err := migrate.New(db.Pool, migrations.FS)
	if err == nil {
		_, err = runner.Up(ctx)
	}
	return err
}

// template returns the name of a migrated template for the current
// migrations, building it once per server under an advisory lock.
func template(ctx context.Context, base string) (string, error) {
	digest, err := migrationsDigest()
	if err != nil {
		return "", err
	}
	name := "oml_tmpl_" + digest
	err = adminExec(ctx, base, func(c *pgx.Conn) error {
		if ready, err := isReady(ctx, c, name); err != nil || ready {
			return err
		}
		if _, err := c.Exec(ctx, "SELECT pg_advisory_lock(hashtext('oml.pgtest.template'))"); err != nil {
			return err
		}
		defer func() {
			_, _ = c.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext('oml.pgtest.template'))")
		}()
		if ready, err := isReady(ctx, c, name); err != nil || ready {
			return err
		}
		var exists bool
		if err := c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
				return err
			}
		}
		db, err := pg.Open(ctx, withDatabase(base, name), pg.Options{MaxConns: 2})
		if err != nil {
			return err
		}
		err = migrateUp(ctx, db)
		db.Close()
		if err != nil {
			return fmt.Errorf("migrate template: %w", err)
		}
		_, err = c.Exec(ctx, "COMMENT ON DATABASE "+pgx.Identifier{name}.Sanitize()+" IS 'ready'")
		return err
	})
	return name, err
}

func isReady(ctx context.Context, c *pgx.Conn, name string) (bool, error) {
	var ready bool
	err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database
		WHERE datname = $1 AND shobj_description(oid, 'pg_database') = 'ready')`, name).Scan(&ready)
	return ready, err
}

// clone copies the template, retrying while a template builder elsewhere
// still holds a connection to it.
func clone(ctx context.Context, c *pgx.Conn, tmpl, name string) error {
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{tmpl}.Sanitize()
	for attempt := 0; ; attempt++ {
		_, err := c.Exec(ctx, sql)
		var pgErr *pgconn.PgError
		if err == nil || attempt == 50 || !errors.As(err, &pgErr) || pgErr.Code != "55006" {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func adminExec(ctx context.Context, base string, fn func(*pgx.Conn) error) error {
	c, err := pgx.Connect(ctx, base)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", EnvURL, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	return fn(c)
}

func withDatabase(base, name string) string {
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		return base + " dbname=" + name
	}
	u.Path = "/" + name
	return u.String()
}

func migrationsDigest() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}
