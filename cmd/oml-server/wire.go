package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/omlhub/oml/contexts/access"
	"github.com/omlhub/oml/contexts/admission"
	"github.com/omlhub/oml/contexts/lineage"
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
	access    *access.Module
	admission *admission.Module
	handler   http.Handler
}

// keys is the deployment's key material.
type keys struct {
	signing ed25519.PrivateKey
}

func assemble(cfg config.Config, db *pg.DB, log *slog.Logger, k keys) (*app, error) {
	runner, err := migrate.New(db.Pool, migrations.FS)
	if err != nil {
		return nil, err
	}
	j := journal.New(db, nil)
	idem := idempotency.New(db)
	acc := access.New(access.Deps{
		DB: db, Journal: j, Idempotency: idem,
		GuideURL: cfg.PublicURL + transport.GuidePath,
	})
	adm := admission.New(admission.Deps{
		DB: db, Journal: j, Idempotency: idem,
		Access:  accessPort{acc},
		Lineage: lineage.New(lineage.Deps{DB: db}),
		Uploads: noUploads{}, Index: noIndex{},
		SigningKey: k.signing, MaxText: cfg.MaxTextBytes, ServeTTL: cfg.ServeTTL,
	})
	h := transport.New(transport.Options{
		Logger:         log,
		Authenticator:  acc,
		MaxBodyBytes:   cfg.MaxBodyBytes,
		PublicURL:      cfg.PublicURL,
		AllowedOrigins: cfg.AllowedOrigins,
		Name:           "oml",
		Ready:          readiness(db, runner),
	}, acc, adm)
	return &app{access: acc, admission: adm, handler: h}, nil
}

// accessPort adapts the access context to admission's Access port.
type accessPort struct{ m *access.Module }

func (a accessPort) Workarea(ctx context.Context, ref string) (admission.Workarea, error) {
	w, err := a.m.Effective(ctx, ref)
	if err != nil {
		return admission.Workarea{}, err
	}
	return admission.Workarea{
		ID: w.ID, Path: w.Path, IDPath: w.IDPath, Status: w.Status, Root: w.Root,
		Reader: slices.Contains(w.Scopes, "reader"), Writer: slices.Contains(w.Scopes, "writer"),
		Admin: slices.Contains(w.Scopes, "admin"),
	}, nil
}

func (a accessPort) WorkareaByID(ctx context.Context, id string) (admission.Workarea, error) {
	return a.Workarea(ctx, id)
}

func (a accessPort) Subtrees(ctx context.Context, scope string) (admission.Subtrees, error) {
	allow, deny, err := a.m.Subtrees(ctx, scope)
	return admission.Subtrees{Allow: allow, Deny: deny}, err
}

// noUploads stands for the attachments context until it lands: every
// upload session is unknown.
type noUploads struct{}

func (noUploads) Bind(context.Context, string, string, string, []string) ([]admission.Attachment, error) {
	return nil, errs.New(errs.UploadUnusable, "attachments bind completed upload sessions only (D3)",
		"no completed upload session with that id for this key")
}

// noIndex stands for the retrieval context's serving tier until it lands.
type noIndex struct{}

func (noIndex) Promoted(context.Context, admission.Claim) error { return nil }
func (noIndex) Withdrawn(context.Context, string, string) error { return nil }

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
