// Package gate bounds how many callers do one kind of work at once. The
// others wait their turn in the process, where waiting is cheap, instead
// of as more runnable Postgres backends than the machine has cores: on 2
// cores, 16 concurrent recalls did about 0.7 of the work 4 at a time did
// (docs/BENCHMARKS.md, "Recalls a few at a time").
package gate

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

// Gate lets at most its size of callers in at once. A nil *Gate lets
// everyone in.
type Gate struct {
	slots   chan struct{}
	waiting atomic.Int64
	// rule names the setting that sizes the gate, for a refusal.
	rule string
}

// MaxWait bounds how long a caller waits for a turn; a caller whose
// context ends sooner leaves sooner.
const MaxWait = 10 * time.Second

// MaxWaitingPerSlot bounds the waiting callers, per slot: past it a caller
// is refused at once rather than queued behind minutes of work.
const MaxWaitingPerSlot = 256

// New returns a gate of size n (at least 1); rule names what sets it, as
// a refusal quotes it ("OML_RECALL_CONCURRENCY").
func New(n int, rule string) *Gate {
	return &Gate{slots: make(chan struct{}, max(n, 1)), rule: rule}
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
		return nil, g.refusal("%d callers are waiting already", MaxWaitingPerSlot*cap(g.slots))
	}
	defer g.waiting.Add(-1)
	t := time.NewTimer(MaxWait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return g.leaver(), nil
	case <-ctx.Done():
		return nil, g.refusal("the request ended while it waited for a turn (%v)", context.Cause(ctx))
	case <-t.C:
		return nil, g.refusal("no turn came within %v", MaxWait)
	}
}

func (g *Gate) leaver() func() {
	var once sync.Once
	return func() { once.Do(func() { <-g.slots }) }
}

func (g *Gate) refusal(format string, args ...any) error {
	return errs.Retry(errs.Unavailable, g.rule+": at most "+strconv.Itoa(cap(g.slots))+" at once on this replica", time.Second,
		"this replica is busy: "+format+"; try again shortly", args...)
}
