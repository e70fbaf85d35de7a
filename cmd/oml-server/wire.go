package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/omlhub/oml/contexts/access"
	"github.com/omlhub/oml/platform/config"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/migrate"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/transport"
	"github.com/omlhub/oml/sql/migrations"
)

// app is the assembled process: contexts wired to each other and to the
// shared kernel.
type app struct {
	access  *access.Module
	handler http.Handler
}

func assemble(cfg config.Config, db *pg.DB, log *slog.Logger) (*app, error) {
	runner, err := migrate.New(db.Pool, migrations.FS)
	if err != nil {
		return nil, err
	}
	j := journal.New(db, nil)
	acc := access.New(access.Deps{
		DB: db, Journal: j, Idempotency: idempotency.New(db),
		GuideURL: cfg.PublicURL + transport.GuidePath,
	})
	h := transport.New(transport.Options{
		Logger:         log,
		Authenticator:  acc,
		MaxBodyBytes:   cfg.MaxBodyBytes,
		PublicURL:      cfg.PublicURL,
		AllowedOrigins: cfg.AllowedOrigins,
		Name:           "oml",
		Ready:          readiness(db, runner),
	}, acc)
	return &app{access: acc, handler: h}, nil
}

// readiness: the database answers and its schema is this binary's. When
// the schema catches up after the server started (migrate ran later), the
// pool is reset once so every connection registers the types the
// migrations created (pgvector's).
func readiness(db *pg.DB, runner *migrate.Runner) func(context.Context) error {
	var behind atomic.Bool
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err := db.Pool.Ping(ctx); err != nil {
			return errs.Retry(errs.Unavailable, "readiness: the database must answer", 5*time.Second, "database unreachable")
		}
		v, err := runner.Current(ctx)
		if err != nil {
			return errs.Retry(errs.Unavailable, "readiness: the schema version must be readable", 5*time.Second, "schema version unreadable")
		}
		if v != runner.Latest() {
			behind.Store(true)
			return errs.Retry(errs.Unavailable, "readiness: migrations must be current (oml-server migrate)", 5*time.Second,
				"database schema is at version %d, this binary needs %d", v, runner.Latest())
		}
		if behind.CompareAndSwap(true, false) {
			db.Pool.Reset()
		}
		return nil
	}
}

func newLogger(cfg config.Config, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func openDB(ctx context.Context, cfg config.Config) (*pg.DB, error) {
	if err := cfg.RequireDatabase(); err != nil {
		return nil, err
	}
	db, err := pg.Open(ctx, cfg.DatabaseURL, pg.Options{MaxConns: cfg.DBMaxConns, ApplicationName: "oml-server"})
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return db, nil
}
