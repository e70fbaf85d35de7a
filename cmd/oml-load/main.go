// Command oml-load drives a realistic mix of agent and reviewer traffic at
// one or more oml-server replicas, round-robin, over MCP and HTTP, then
// checks that nothing acknowledged was lost or written twice and that the
// tenant's journal verifies.
//
//	oml-load -urls http://a:8080,http://b:8080 -key $OML_ADMIN_KEY -duration 30s -concurrency 8
//
// The key is a tenant admin's (admin on universe): the run creates its own
// workarea, writer and reviewer keys and grants under it. The mix is, by
// default, recall 60 % (HTTP and MCP), remember 15 % (MCP and HTTP, each
// write with its own idempotency key, retried on the next replica until
// acknowledged), events 10 % (the HTTP tail and the MCP feed), review 10 %
// (serve and approve), upload 5 % (open a session, PUT its part). With
// -rate the operations start at a fixed rate (a soak); without, each worker
// starts the next as soon as the last ends. -every prints a line per
// interval with each replica's RSS from /metrics (-metrics-token, when
// the replicas have an OML_METRICS_TOKEN). The exit status is 1 when
// the check fails or an operation ended in a 5xx or transport error beyond
// -max-errors.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "oml-load:", err)
		os.Exit(1)
	}
}

type options struct {
	urls        []string
	key         string
	duration    time.Duration
	ops         int
	concurrency int
	rate        float64
	mix         map[string]int
	uploadBytes int
	every       time.Duration
	maxErrors   int
	json        bool
	seed        int
	plot        string
	// metricsToken is the replicas' OML_METRICS_TOKEN, for -every's RSS.
	metricsToken string
	corpus       int
}

// Result is what -json prints.
type Result struct {
	Fixture   fixture    `json:"fixture"`
	ElapsedS  float64    `json:"elapsed_s"`
	Ops       []OpReport `json:"ops"`
	Errors    int        `json:"errors"`
	Check     Check      `json:"check"`
	Intervals []Interval `json:"intervals,omitempty"`
}

func parse(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("oml-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	urls := fs.String("urls", envOr("OML_URL", "http://127.0.0.1:8080"), "comma-separated replica URLs, used round-robin")
	key := fs.String("key", os.Getenv("OML_API_KEY"), "a tenant admin key (admin on universe)")
	o := options{}
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "how long to run")
	fs.IntVar(&o.ops, "ops", 0, "stop after this many operations (0: only -duration bounds the run)")
	fs.IntVar(&o.concurrency, "concurrency", 8, "workers")
	fs.Float64Var(&o.rate, "rate", 0, "operations started per second across all workers (0: as fast as they complete)")
	mix := fs.String("mix", "recall=60,remember=15,events=10,review=10,upload=5", "the operation mix, in weights")
	fs.IntVar(&o.uploadBytes, "upload-bytes", 64<<10, "size of each uploaded attachment")
	fs.DurationVar(&o.every, "every", 0, "print a line per interval (p50, p99, replicas' RSS); 0: none")
	fs.IntVar(&o.maxErrors, "max-errors", 0, "operations that may end in a 5xx or a transport error (injected faults)")
	fs.BoolVar(&o.json, "json", false, "print the result as JSON")
	fs.StringVar(&o.plot, "plot", "", "write an SVG of p99, p50 and each replica's RSS over time to this file (needs -every)")
	fs.IntVar(&o.seed, "seed", 1, "random seed of the mix")
	fs.IntVar(&o.corpus, "corpus", 0, "write and approve this many memories in a workarea of their own before the run, and recall there: a working set that does not grow (0: recall in the run's workarea)")
	fs.StringVar(&o.metricsToken, "metrics-token", os.Getenv("OML_METRICS_TOKEN"), "the replicas' OML_METRICS_TOKEN, to read their RSS from /metrics for -every")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, u := range strings.Split(*urls, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			o.urls = append(o.urls, u)
		}
	}
	o.key = *key
	switch {
	case len(o.urls) == 0:
		return o, errors.New("-urls: no URL")
	case o.key == "":
		return o, errors.New("-key (or OML_API_KEY): a tenant admin key is needed to set the run up")
	case o.concurrency < 1 || o.concurrency > 1024:
		return o, errors.New("-concurrency: 1–1024")
	case o.duration <= 0 && o.ops <= 0:
		return o, errors.New("bound the run with -duration or -ops")
	case o.corpus < 0 || o.corpus > 100_000:
		return o, errors.New("-corpus: 0–100000")
	case o.uploadBytes < 1 || o.uploadBytes > 5<<20:
		return o, errors.New("-upload-bytes: 1 B to 5 MiB (one part)")
	}
	m, err := parseMix(*mix)
	if err != nil {
		return o, err
	}
	o.mix = m
	return o, nil
}

func parseMix(s string) (map[string]int, error) {
	m := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(w)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("-mix: want name=weight, got %q", part)
		}
		switch name {
		case opRecall, opRemember, opEvents, opReview, opUpload:
			m[name] = n
		default:
			return nil, fmt.Errorf("-mix: unknown operation %q (recall, remember, events, review, upload)", name)
		}
	}
	total := 0
	for _, n := range m {
		total += n
	}
	if total == 0 {
		return nil, errors.New("-mix: the weights sum to 0")
	}
	return m, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	c := newCluster(o.urls)
	defer c.close()
	fx, err := setup(ctx, c, o.key, o.corpus)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	if !o.json {
		fmt.Fprintf(stderr, "oml-load: run %s in workarea %s on %d replica(s), %d workers\n", fx.RunID, fx.Workarea, len(o.urls), o.concurrency)
	}
	led := newLedger(len(fx.Writers))
	st := newStats()
	res := Result{Fixture: fx}

	runCtx, cancel := context.WithCancel(ctx)
	if o.duration > 0 {
		runCtx, cancel = context.WithTimeout(ctx, o.duration)
	}
	defer cancel()
	ops := schedule(runCtx, o)
	var intervals []Interval
	var wg sync.WaitGroup
	if o.every > 0 {
		wg.Go(func() { intervals = sample(runCtx, c, st, o.every, o.metricsToken, stderr) })
	}
	start := time.Now()
	var workers sync.WaitGroup
	for i := range o.concurrency {
		w := &worker{id: i, c: c, fx: fx, led: led, stats: st, rng: rand.New(rand.NewPCG(uint64(o.seed), uint64(i))), upload: o.uploadBytes}
		workers.Go(func() {
			for op := range ops {
				// A started operation finishes even past the deadline: its
				// write must be acknowledged or refused, not cut off.
				w.run(context.WithoutCancel(runCtx), op)
			}
		})
	}
	workers.Wait()
	cancel()
	wg.Wait()
	res.ElapsedS = time.Since(start).Seconds()
	res.Ops = reportOps(st.snapshot())
	res.Errors = fiveXX(res.Ops)
	res.Intervals = intervals
	if o.plot != "" {
		if err := writePlot(o.plot, o, intervals); err != nil {
			fmt.Fprintln(stderr, "oml-load:", err)
		}
	}

	// The check runs on a fresh context: an interrupted run is checked too.
	chk, err := check(context.WithoutCancel(ctx), c, o.key, fx, led)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	res.Check = chk
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	} else {
		printOps(stdout, res.Ops, time.Duration(res.ElapsedS*float64(time.Second)))
		printCheck(stdout, chk)
	}
	var fails []string
	if !chk.OK() {
		fails = append(fails, "the check failed")
	}
	if res.Errors > o.maxErrors {
		fails = append(fails, fmt.Sprintf("%d operations ended in a 5xx or transport error (-max-errors %d)", res.Errors, o.maxErrors))
	}
	if len(fails) > 0 {
		return errors.New(strings.Join(fails, "; "))
	}
	return nil
}

// schedule yields operation names, drawn from the mix, until ctx ends or
// -ops have been yielded; at -rate it paces them.
func schedule(ctx context.Context, o options) <-chan string {
	ch := make(chan string)
	var names []string
	for _, n := range []string{opRecall, opRemember, opEvents, opReview, opUpload} {
		for range o.mix[n] {
			names = append(names, n)
		}
	}
	go func() {
		defer close(ch)
		rng := rand.New(rand.NewPCG(uint64(o.seed), 0xdecaf))
		var tick <-chan time.Time
		if o.rate > 0 {
			t := time.NewTicker(time.Duration(float64(time.Second) / o.rate))
			defer t.Stop()
			tick = t.C
		}
		for n := 0; o.ops <= 0 || n < o.ops; n++ {
			if tick != nil {
				select {
				case <-tick:
				case <-ctx.Done():
					return
				}
			}
			select {
			case ch <- names[rng.IntN(len(names))]:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}
