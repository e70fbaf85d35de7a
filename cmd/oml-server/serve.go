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
		sweepExpired(sweepCtx, a, cfg.ExpirySweep, log)
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

// sweepExpired settles held items past their expiry every interval until
// ctx ends. Every replica runs it; rows are claimed with SKIP LOCKED.
func sweepExpired(ctx context.Context, a *app, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			n, err := a.admission.SweepExpired(ctx, 500)
			if err != nil {
				if ctx.Err() == nil {
					log.ErrorContext(ctx, "held expiry sweep failed", "error", err)
				}
				break
			}
			if n > 0 {
				log.InfoContext(ctx, "held items expired", "count", n)
			}
			if n < 500 {
				break
			}
		}
		for {
			n, err := a.inbox.SweepDue(ctx, 100)
			if err != nil {
				if ctx.Err() == nil {
					log.ErrorContext(ctx, "inbox deadline sweep failed", "error", err)
				}
				break
			}
			if n > 0 {
				log.InfoContext(ctx, "inbox items resolved at their deadline", "count", n)
			}
			if n < 100 {
				break
			}
		}
		for {
			n, err := a.access.SweepWeb(ctx, 500)
			if err != nil {
				if ctx.Err() == nil {
					log.ErrorContext(ctx, "web credential sweep failed", "error", err)
				}
				break
			}
			if n > 0 {
				log.InfoContext(ctx, "old web sessions and sign-in codes deleted", "count", n)
			}
			if n < 500 {
				break
			}
		}
		for {
			n, err := a.attachments.Sweep(ctx, 100)
			if err != nil {
				if ctx.Err() == nil {
					log.ErrorContext(ctx, "attachment sweep failed", "error", err)
				}
				break
			}
			if n > 0 {
				log.InfoContext(ctx, "attachment housekeeping", "count", n)
			}
			if n < 100 {
				break
			}
		}
	}
}
