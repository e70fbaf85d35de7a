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
	"github.com/omlhub/oml/platform/drain"
	"github.com/omlhub/oml/platform/metrics"
	"github.com/omlhub/oml/platform/transport"
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
	k, err := loadKeys(cfg)
	if err != nil {
		return err
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
	a, err := assemble(cfg, db, log, k, store)
	if err != nil {
		return err
	}
	if err := a.attachments.CheckKeys(ctx); err != nil {
		return fmt.Errorf("attachments: %w", err)
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
	// The sweeps run beside the server, the journal's first: events a
	// crash left pending are chained as it starts.
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
	// Requests carry the drain signal: on SIGTERM parked long-polls
	// return at once (their clients ask again elsewhere) while writes
	// finish.
	draining := make(chan struct{})
	// Requests outlive the signal (they finish during the drain) but not
	// the grace period: base is cancelled when it ends.
	base, cancelBase := context.WithCancel(drain.With(context.WithoutCancel(ctx), draining))
	defer cancelBase()
	srv := newServer(a.handler, base)
	errc := make(chan error, 2)
	var metricsSrv *http.Server
	if cfg.MetricsListen != "" {
		mln, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("listen on %s (OML_METRICS_LISTEN): %w", cfg.MetricsListen, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", a.metrics)
		metricsSrv = newServer(mux, context.WithoutCancel(ctx))
		go func() { errc <- metricsSrv.Serve(mln) }()
		log.InfoContext(ctx, "metrics listening", "addr", mln.Addr().String())
	}
	log.InfoContext(ctx, "oml-server starting", "build", buildinfo.Read(), "config", cfg, "addr", ln.Addr().String())

	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Graceful drain: answer /readyz false and end parked long-polls,
	// keep serving for the drain delay (a load balancer's time to take
	// the replica out), then stop accepting and let in-flight requests
	// finish; each releases its own upload lease as it ends.
	a.ready.draining.Store(true)
	metrics.Ready.Set(0)
	close(draining)
	log.InfoContext(ctx, "draining", "delay", cfg.DrainDelay, "timeout", cfg.ShutdownTimeout)
	time.Sleep(cfg.DrainDelay)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if metricsSrv != nil {
		defer func() { _ = metricsSrv.Shutdown(sctx) }()
	}
	if err := srv.Shutdown(sctx); err != nil {
		// Requests still running: cancel them (each rolls its transaction
		// back and releases its upload lease) and close their connections.
		cancelBase()
		_ = srv.Close()
		return fmt.Errorf("shutdown: requests still running after OML_SHUTDOWN_TIMEOUT (%s) were cancelled: %w", cfg.ShutdownTimeout, err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// newServer is an http.Server with the transport's bounds: timeouts for
// the header, the body, the answer and idle connections, and a header
// size limit. base is every request's parent context.
func newServer(h http.Handler, base context.Context) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: transport.ReadHeaderTimeout,
		ReadTimeout:       transport.ReadTimeout,
		WriteTimeout:      transport.WriteTimeout,
		IdleTimeout:       transport.IdleTimeout,
		MaxHeaderBytes:    transport.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
}

// The sweeps, as /metrics labels them.
const (
	sweepHeld        = "held_expiry"
	sweepInbox       = "inbox_deadline"
	sweepEnrolments  = "enrolments"
	sweepWeb         = "web_sessions"
	sweepReadLog     = "read_log"
	sweepIdempotency = "idempotency"
	sweepAttachments = "attachments"
	sweepJournal     = "journal"
)

// sweepExpired runs the housekeeping sweeps every interval until ctx
// ends: journal events a crash left pending, held items past their
// expiry, inbox items past their deadline, web sessions long ended,
// read-log rows and idempotency records past their retention, attachment
// housekeeping. Every replica runs it; rows are claimed with SKIP LOCKED
// or deleted in bounded batches.
func sweepExpired(ctx context.Context, a *app, cfg config.Config, log *slog.Logger) {
	// Events a process left pending when it stopped are chained at once,
	// not an interval later.
	sweepJournalPending(ctx, a, log)
	t := time.NewTicker(cfg.ExpirySweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sweepJournalPending(ctx, a, log)
		sweep(ctx, log, sweepHeld, "held items expired", 500, func(n int) (int64, error) {
			c, err := a.admission.SweepExpired(ctx, n)
			return int64(c), err
		})
		sweep(ctx, log, sweepInbox, "inbox items resolved at their deadline", 100, func(n int) (int64, error) {
			c, err := a.inbox.SweepDue(ctx, n)
			return int64(c), err
		})
		sweep(ctx, log, sweepEnrolments, "enrolment requests abandoned past their TTL", 100, func(n int) (int64, error) {
			c, err := a.access.SweepEnrolments(ctx, n)
			return int64(c), err
		})
		sweep(ctx, log, sweepWeb, "old web sessions and sign-in codes deleted", 500, func(n int) (int64, error) {
			return a.access.SweepWeb(ctx, n)
		})
		if keep := cfg.ReadLogRetention; keep > 0 {
			sweep(ctx, log, sweepReadLog, "read-log rows past their retention deleted", 1000, func(n int) (int64, error) {
				return a.retrieval.SweepReadLog(ctx, time.Now().Add(-keep), n)
			})
		}
		if keep := cfg.IdempotencyRetention; keep > 0 {
			sweep(ctx, log, sweepIdempotency, "idempotency records past their retention deleted", 1000, func(n int) (int64, error) {
				return a.idempotency.Purge(ctx, time.Now().Add(-keep), n)
			})
		}
		sweep(ctx, log, sweepAttachments, "attachment housekeeping", 100, func(n int) (int64, error) {
			c, err := a.attachments.Sweep(ctx, n)
			return int64(c), err
		})
	}
}

// sweepJournalPending chains journal events a process left pending when
// it died between a commit and the sequencer's pass (or whose pass
// failed): up to 100 tenants a run, those waiting longest first; the next
// run takes any more.
func sweepJournalPending(ctx context.Context, a *app, log *slog.Logger) {
	sweepRuns(ctx, log, sweepJournal, "pending journal events chained", func() (int64, bool, error) {
		_, n, err := a.journal.Sweep(ctx, 100)
		return n, false, err
	})
}

// sweep runs one sweep in batches of batch until a batch comes back
// short, logging what it did and any failure (the next tick retries), and
// counting the run and its rows under name in /metrics.
func sweep(ctx context.Context, log *slog.Logger, name, what string, batch int, run func(batch int) (int64, error)) {
	sweepRuns(ctx, log, name, what, func() (int64, bool, error) {
		n, err := run(batch)
		return n, n >= int64(batch), err
	})
}

// sweepRuns calls run while it reports more to do and no error, counting
// its rows and the outcome under name in /metrics and logging them.
func sweepRuns(ctx context.Context, log *slog.Logger, name, what string, run func() (n int64, more bool, err error)) {
	for {
		n, more, err := run()
		metrics.SweeperItems.WithLabelValues(name).Add(float64(n))
		if n > 0 {
			log.InfoContext(ctx, what, "count", n)
		}
		if err != nil {
			if ctx.Err() == nil {
				metrics.SweeperRuns.WithLabelValues(name, "error").Inc()
				log.ErrorContext(ctx, "sweep failed", "sweep", what, "error", err)
			}
			return
		}
		if !more {
			metrics.SweeperRuns.WithLabelValues(name, "ok").Inc()
			return
		}
	}
}
