package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/journal"
)

// BenchmarkAdmission measures held submissions per second for one tenant
// (POST /v1/memories from the load generator) and a serve + verdict round
// trip through the HTTP API and through the reviewer's web pages, beside the journal append alone (in process, one event per
// transaction, the same tenant) in the same run:
//
//	go test -run '^$' -bench Admission -benchtime 2000x ./cmd/oml-server
func BenchmarkAdmission(b *testing.B) {
	e := setupBench(b)
	for _, c := range []int{1, 8, 32} {
		// The journal alone: events chained by the sequencer after each
		// commit (what every write but the inbox's does), and chained in
		// the transaction under the head's lock (the inbox; every write
		// before the sequencer).
		b.Run(fmt.Sprintf("target=journal/c=%d", c), func(b *testing.B) { e.journalAlone(b, c, false) })
		b.Run(fmt.Sprintf("target=journal_in_tx/c=%d", c), func(b *testing.B) { e.journalAlone(b, c, true) })
		b.Run(fmt.Sprintf("target=remember/c=%d", c), func(b *testing.B) {
			e.load(b, loadSpec{Target: "remember", Concurrency: c, Warmup: 50})
		})
		// The same submissions with every event chained in its own
		// transaction: the path before the sequencer, as a baseline.
		b.Run(fmt.Sprintf("target=remember_in_tx/c=%d", c), func(b *testing.B) {
			e.app.journal.ChainInTx(true)
			defer e.app.journal.ChainInTx(false)
			e.load(b, loadSpec{Target: "remember", Concurrency: c, Warmup: 50})
		})
	}
	// The submissions above fill the review queue. The same round trip
	// through the reviewer's pages (form posts, HTML answers) sits beside
	// the API's.
	for _, c := range []int{1, 8} {
		for _, target := range []string{"review", "review_web"} {
			b.Run(fmt.Sprintf("target=%s/c=%d", target, c), func(b *testing.B) {
				// Each run reviews its own items: as many as it serves,
				// submitted before the clock starts.
				e.run(b, loadSpec{Target: "remember", Concurrency: 8, N: b.N + 20})
				// Statistics as autovacuum keeps them on a live database.
				// Without them the plans each connection caches on this
				// fresh database's near-empty tables stay in use for the
				// whole run (docs/BENCHMARKS.md, "Serve + verdict").
				if os.Getenv("BENCH_NO_ANALYZE") == "" {
					if _, err := e.db.Pool.Exec(context.Background(), "ANALYZE"); err != nil {
						b.Fatal(err)
					}
				}
				e.load(b, loadSpec{Target: target, Concurrency: c, Warmup: 20})
			})
		}
	}
}

// journalAlone appends b.N events to one tenant's chain from c goroutines,
// each in its own transaction, chained after the commit or, inTx, in it.
func (e *benchEnv) journalAlone(b *testing.B, c int, inTx bool) {
	j := journal.New(e.db, nil)
	ctx := context.Background()
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	start := time.Now()
	for range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				err := e.db.InTx(ctx, func(ctx context.Context) error {
					ev := journal.Event{
						Type: "bench.append", Actor: "bench", Subject: map[string]any{"i": i},
						Payload: map[string]any{"kind": "memory", "held_expires_at": t0},
					}
					if inTx {
						_, err := j.AppendSequenced(ctx, "tn_bench_journal", ev)
						return err
					}
					_, err := j.Append(ctx, "tn_bench_journal", ev)
					return err
				})
				if err != nil {
					failed.Store(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(ms(lat[b.N/2]), "p50-ms")
	b.ReportMetric(ms(lat[b.N*99/100]), "p99-ms")
}
