// Package gate bounds how many callers do one kind of work at once. The
// others wait their turn in the process, a parked goroutine each, instead
// of as more runnable Postgres backends than the machine has cores: on 2
// cores, 16 recalls at once did about 0.8 of the work of 4 at a time
// (docs/BENCHMARKS.md, "Recalls a few at a time").
package gate

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/omlhub/oml/platform/errs"
)

// Gate lets at most its size of callers in at once. A nil *Gate lets
// everyone in.
type Gate struct {
	slots   chan struct{}
	waiting atomic.Int64
	// rule is a refusal's rule: what the gate is and the setting that
	// sizes it, the same on every replica.
	rule string
	in   Instruments
}

// Instruments are where a gate reports; a nil field is not reported.
type Instruments struct {
	// Waiting is the callers waiting for a turn now.
	Waiting prometheus.Gauge
	// Refused counts refusals by reason: "full" (too many waiting),
	// "ended" (the request ended first), "timeout" (MaxWait passed).
	Refused *prometheus.CounterVec
}

// MaxWait bounds how long a caller waits for a turn; a caller whose
// context ends sooner leaves sooner.
const MaxWait = 10 * time.Second

// MaxWaitingPerSlot bounds the waiting callers, per slot: past it a caller
// is refused at once rather than queued behind minutes of work.
const MaxWaitingPerSlot = 256

// New returns a gate of size n (at least 1). rule is its refusals' rule,
// naming what the gate is and the setting that sizes it; the size is not
// in it (nor in a refusal's message), as callers need not learn a
// replica's CPUs.
func New(n int, rule string, in Instruments) *Gate {
	return &Gate{slots: make(chan struct{}, max(n, 1)), rule: rule, in: in}
}

// Size is how many callers the gate lets in at once.
func (g *Gate) Size() int {
	if g == nil {
		return 0
	}
	return cap(g.slots)
}

// Enter waits for a turn and returns the function that ends it (safe to
// call more than once). It refuses with a retryable service.unavailable
// when too many callers wait already, or when ctx ends or MaxWait passes
// before a turn comes.
func (g *Gate) Enter(ctx context.Context) (leave func(), err error) {
	if g == nil {
		return func() {}, nil
	}
	select {
	case g.slots <- struct{}{}:
		return g.leaver(), nil
	default:
	}
	if g.waiting.Add(1) > int64(MaxWaitingPerSlot*cap(g.slots)) {
		g.waiting.Add(-1)
		return nil, g.refuse("full", "too many calls are waiting already")
	}
	defer g.waiting.Add(-1)
	if g.in.Waiting != nil {
		g.in.Waiting.Inc()
		defer g.in.Waiting.Dec()
	}
	t := time.NewTimer(MaxWait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return g.leaver(), nil
	case <-ctx.Done():
		return nil, g.refuse("ended", "the request ended before its turn came")
	case <-t.C:
		return nil, g.refuse("timeout", "no turn came within "+MaxWait.String())
	}
}

func (g *Gate) leaver() func() {
	var once sync.Once
	return func() { once.Do(func() { <-g.slots }) }
}

func (g *Gate) refuse(reason, why string) error {
	if g.in.Refused != nil {
		g.in.Refused.WithLabelValues(reason).Inc()
	}
	return errs.Retry(errs.Unavailable, g.rule, time.Second, "this replica is busy: %s; try again shortly", why)
}
