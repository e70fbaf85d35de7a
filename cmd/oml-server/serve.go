package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/omlhub/oml/contexts/attachments"
	"github.com/omlhub/oml/platform/buildinfo"
	"github.com/omlhub/oml/platform/config"
	"github.com/omlhub/oml/platform/crypto"
)

func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if err := cfg.RequireServe(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := newLogger(cfg, stderr)
	tuneGC(getenv)
	signing, err := crypto.LoadSigningKey(cfg.SigningKeyFile)
	if err != nil {
		return fmt.Errorf("signing key: %w", err)
	}
	master, err := crypto.LoadMasterKey(cfg.MasterKeyFile)
	if err != nil {
		return fmt.Errorf("master key: %w", err)
	}
	db, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := attachments.OpenStore(ctx, cfg.BlobStore, getenv)
	if err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	a, err := assemble(cfg, db, log, keys{signing: signing, master: master}, store)
	if err != nil {
		return err
	}
	// The listener (waits across replicas) and the sweeper are joined
	// before the pool closes (defers run last first).
	listenCtx, stopListening := context.WithCancel(ctx)
	listened := make(chan struct{})
	go func() {
		defer close(listened)
		_ = a.listener.Run(listenCtx)
	}()
	defer func() {
		stopListening()
		<-listened
	}()
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		sweepExpired(sweepCtx, a, cfg, log)
	}()
	defer func() {
		stopSweep()
		<-swept
	}()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	srv := &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: 10 * time.Second,
		// Bodies are bounded in size; bound them in time too (slow-body
		// clients), with room for an 8 MiB upload part on a slow link.
		ReadTimeout:  2 * time.Minute,
		WriteTimeout: 2 * time.Minute,
		IdleTimeout:  2 * time.Minute,
	}
	log.InfoContext(ctx, "oml-server starting", "build", buildinfo.Read(), "config", cfg, "addr", ln.Addr().String())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Graceful shutdown: stop accepting, let in-flight requests finish.
	log.InfoContext(ctx, "shutting down", "timeout", cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// sweepExpired runs the housekeeping sweeps every interval until ctx
// ends: held items past their expiry, inbox items past their deadline,
// web sessions long ended, read-log rows and idempotency records past
// their retention, attachment housekeeping. Every replica runs it; rows
// are claimed with SKIP LOCKED or deleted in bounded batches.
func sweepExpired(ctx context.Context, a *app, cfg config.Config, log *slog.Logger) {
	t := time.NewTicker(cfg.ExpirySweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sweep(ctx, log, "held items expired", 500, func(n int) (int64, error) {
			c, err := a.admission.SweepExpired(ctx, n)
			return int64(c), err
		})
		sweep(ctx, log, "inbox items resolved at their deadline", 100, func(n int) (int64, error) {
			c, err := a.inbox.SweepDue(ctx, n)
			return int64(c), err
		})
		sweep(ctx, log, "enrolment requests abandoned past their TTL", 100, func(n int) (int64, error) {
			c, err := a.access.SweepEnrolments(ctx, n)
			return int64(c), err
		})
		sweep(ctx, log, "old web sessions and sign-in codes deleted", 500, func(n int) (int64, error) {
			return a.access.SweepWeb(ctx, n)
		})
		if keep := cfg.ReadLogRetention; keep > 0 {
			sweep(ctx, log, "read-log rows past their retention deleted", 1000, func(n int) (int64, error) {
				return a.retrieval.SweepReadLog(ctx, time.Now().Add(-keep), n)
			})
		}
		if keep := cfg.IdempotencyRetention; keep > 0 {
			sweep(ctx, log, "idempotency records past their retention deleted", 1000, func(n int) (int64, error) {
				return a.idempotency.Purge(ctx, time.Now().Add(-keep), n)
			})
		}
		sweep(ctx, log, "attachment housekeeping", 100, func(n int) (int64, error) {
			c, err := a.attachments.Sweep(ctx, n)
			return int64(c), err
		})
	}
}

// sweep runs one sweep in batches of batch until a batch comes back
// short, logging what it did and any failure (the next tick retries).
func sweep(ctx context.Context, log *slog.Logger, what string, batch int, run func(batch int) (int64, error)) {
	for {
		n, err := run(batch)
		if err != nil {
			if ctx.Err() == nil {
				log.ErrorContext(ctx, "sweep failed", "sweep", what, "error", err)
			}
			return
		}
		if n > 0 {
			log.InfoContext(ctx, what, "count", n)
		}
		if n < int64(batch) {
			return
		}
	}
}
