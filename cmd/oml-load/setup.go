package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The run's keys: two writers (authors) and two reviewers.
const (
	writers   = 2
	reviewers = 2
)

// setup creates the run's workarea under the tenant's root, its writer
// and reviewer keys and their grants, with corpus > 0 a sibling workarea
// holding that many approved memories, and notes the journal's head.
func setup(ctx context.Context, c *cluster, admin string, corpus int) (fixture, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	fx := fixture{RunID: hex.EncodeToString(b[:])}
	base := c.urls[0]
	var who struct {
		RootWorkarea string `json:"root_workarea"`
		Role         string `json:"role"`
	}
	if o := c.do(ctx, base, "GET", "/v1/whoami", admin, nil, &who); !o.ok() {
		return fx, fmt.Errorf("whoami: %s", o.label())
	}
	var wa struct {
		ID string `json:"id"`
	}
	if o := c.do(ctx, base, "POST", "/v1/workareas", admin, map[string]any{"parent": who.RootWorkarea,
		"name": "load-" + fx.RunID, "status": "committed"}, &wa); !o.ok() {
		return fx, fmt.Errorf("create the workarea under %s: %s (the key must be admin on universe)", who.RootWorkarea, o.label())
	}
	fx.Workarea = wa.ID
	workareas := []string{fx.Workarea}
	if corpus > 0 {
		if o := c.do(ctx, base, "POST", "/v1/workareas", admin, map[string]any{"parent": who.RootWorkarea,
			"name": "load-" + fx.RunID + "-corpus", "status": "committed"}, &wa); !o.ok() {
			return fx, fmt.Errorf("create the corpus workarea: %s", o.label())
		}
		fx.Corpus = wa.ID
		workareas = append(workareas, fx.Corpus)
	}
	issue := func(role string, n int) (string, error) {
		var k struct {
			KeyID string `json:"key_id"`
			Token string `json:"token"`
		}
		if o := c.do(ctx, base, "POST", "/v1/keys", admin, map[string]any{"principal": fmt.Sprintf("load-%s-%s-%d", fx.RunID, role, n),
			"role": "dreamer"}, &k); !o.ok() {
			return "", fmt.Errorf("issue a key: %s", o.label())
		}
		scopes := []string{"reader", "writer"}
		if role == "reviewer" {
			scopes = []string{"reader", "dreamer.review"}
		}
		for _, wa := range workareas {
			for _, s := range scopes {
				if o := c.do(ctx, base, "POST", "/v1/grants", admin, map[string]any{"key_id": k.KeyID, "workarea": wa,
					"scope": s, "effect": "allow"}, nil); !o.ok() {
					return "", fmt.Errorf("grant %s: %s", s, o.label())
				}
			}
		}
		return k.Token, nil
	}
	for i := range writers {
		t, err := issue("writer", i)
		if err != nil {
			return fx, err
		}
		fx.Writers = append(fx.Writers, t)
	}
	for i := range reviewers {
		t, err := issue("reviewer", i)
		if err != nil {
			return fx, err
		}
		fx.Reviewers = append(fx.Reviewers, t)
	}
	if corpus > 0 {
		if err := seedCorpus(ctx, c, fx, corpus); err != nil {
			return fx, fmt.Errorf("corpus: %w", err)
		}
	}
	var tail struct {
		HeadSeq int64 `json:"head_seq"`
	}
	if o := c.do(ctx, base, "GET", "/v1/events?scope="+url.QueryEscape(fx.Workarea), admin, nil, &tail); !o.ok() {
		return fx, fmt.Errorf("journal head: %s", o.label())
	}
	fx.StartSeq = tail.HeadSeq
	return fx, nil
}

// seedCorpus writes n memories into the corpus workarea and approves
// them all, eight workers at a time, before the run: recall's working set
// stays the same size for the whole run, so a soak's latency over time
// shows the servers, not the corpus growing. Its writes are not the run's
// and are not checked with them.
func seedCorpus(ctx context.Context, c *cluster, fx fixture, n int) error {
	sfx := fx
	sfx.Workarea = fx.Corpus
	led := newLedger(len(fx.Writers))
	ws := make([]*worker, 8)
	for i := range ws {
		ws[i] = &worker{id: 1_000_000 + i, c: c, fx: sfx, led: led, stats: newStats(), rng: mrand.New(mrand.NewPCG(7, uint64(i)))}
	}
	// times runs op k times in all across the workers; the first refusal
	// stops it.
	times := func(k int, op func(w *worker) outcome) error {
		var left atomic.Int64
		left.Store(int64(k))
		var failed atomic.Value
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Go(func() {
				for left.Add(-1) >= 0 && failed.Load() == nil && ctx.Err() == nil {
					if o := op(w); !o.ok() {
						failed.CompareAndSwap(nil, o.label())
					}
				}
			})
		}
		wg.Wait()
		if f := failed.Load(); f != nil {
			return fmt.Errorf("seeding %d memories: %v", n, f)
		}
		return ctx.Err()
	}
	if err := times(n, func(w *worker) outcome { o, _ := w.remember(ctx); return o }); err != nil {
		return err
	}
	approved := func() int {
		led.mu.Lock()
		defer led.mu.Unlock()
		return len(led.approved)
	}
	// A serve comes back empty while other reviewers hold the last
	// leases: a few rounds approve the rest.
	for range 5 {
		if approved() >= n {
			return nil
		}
		if err := times(n-approved(), func(w *worker) outcome { o, _ := w.review(ctx); return o }); err != nil {
			return err
		}
	}
	if got := approved(); got < n {
		return fmt.Errorf("seeding %d memories: %d approved", n, got)
	}
	return nil
}

// Interval is one -every line.
type Interval struct {
	AtS    float64   `json:"at_s"`
	Ops    int       `json:"ops"`
	P50ms  float64   `json:"p50_ms"`
	P99ms  float64   `json:"p99_ms"`
	RSSMiB []float64 `json:"rss_mib"` // per replica, -1 when /metrics did not answer
	// P99msByOp and MaxmsByOp name the operation that owns a slow tail.
	P99msByOp map[string]float64 `json:"p99_ms_by_op"`
	MaxmsByOp map[string]float64 `json:"max_ms_by_op"`
}

// sample prints a line every interval until ctx ends: operations, p50
// and p99 of the interval, each replica's resident memory.
func sample(ctx context.Context, c *cluster, st *stats, every time.Duration, token string, w io.Writer) []Interval {
	var out []Interval
	start := time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	fmt.Fprintf(w, "| t s | ops | p50 ms | p99 ms | RSS MiB per replica |\n| ---: | ---: | ---: | ---: | --- |\n")
	for {
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
		}
		lat, byOp := st.takeWindow()
		iv := Interval{AtS: time.Since(start).Seconds(), Ops: len(lat), P50ms: ms(quantile(lat, .5)), P99ms: ms(quantile(lat, .99)),
			P99msByOp: map[string]float64{}, MaxmsByOp: map[string]float64{}}
		for op, l := range byOp {
			iv.P99msByOp[op], iv.MaxmsByOp[op] = ms(quantile(l, .99)), ms(l[len(l)-1])
		}
		var rss []string
		for _, u := range c.urls {
			// The last tick may come as the run ends: read it anyway.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			v := residentMiB(rctx, c.http, u, token)
			cancel()
			iv.RSSMiB = append(iv.RSSMiB, v)
			rss = append(rss, strconv.FormatFloat(v, 'f', 1, 64))
		}
		out = append(out, iv)
		fmt.Fprintf(w, "| %.0f | %d | %.1f | %.1f | %s |\n", iv.AtS, iv.Ops, iv.P50ms, iv.P99ms, strings.Join(rss, " "))
	}
}

// residentMiB reads process_resident_memory_bytes from a replica's
// /metrics, presenting token when there is one (-1 when it does not
// answer).
func residentMiB(ctx context.Context, hc *http.Client, base, token string) float64 {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	if err != nil {
		return -1
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_resident_memory_bytes "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f / (1 << 20)
			}
		}
	}
	return -1
}
