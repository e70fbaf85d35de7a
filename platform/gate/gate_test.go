package gate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/gate"
)

// At most the gate's size are in at once, however many ask; each leave
// lets the next one in, and a second call of the same leave frees nothing.
func TestGateLetsItsSizeInAtOnce(t *testing.T) {
	g := gate.New(3, "TEST_SIZE", gate.Instruments{})
	var in, most atomic.Int64
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			leave, err := g.Enter(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			n := in.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(time.Millisecond)
			in.Add(-1)
			leave()
			leave()
		})
	}
	wg.Wait()
	if most.Load() != 3 {
		t.Fatalf("%d in at once, want 3", most.Load())
	}
	// Every slot came back: three enter at once again.
	for range 3 {
		if _, err := g.Enter(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// A caller whose context ends while it waits is refused with a typed,
// retryable service.unavailable naming the setting; so is a nil gate's
// opposite, a zero size, which still lets one in.
func TestGateRefusesAWaiterWhoseContextEnds(t *testing.T) {
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "refused"}, []string{"reason"})
	g := gate.New(0, "TEST_SIZE", gate.Instruments{Refused: refused})
	if g.Size() != 1 {
		t.Fatalf("size %d, want 1", g.Size())
	}
	leave, err := g.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = g.Enter(ctx)
	e := errs.From(err)
	if !errs.Is(err, errs.Unavailable) || !e.Retryable || e.Rule != "TEST_SIZE" || e.Message != "this replica is busy: the request ended before its turn came; try again shortly" {
		t.Fatalf("waiter past its deadline: %#v", e)
	}
	if n := testutil.ToFloat64(refused.WithLabelValues("ended")); n != 1 {
		t.Fatalf("%v refusals counted as ended", n)
	}
	leave()
	if leave, err := g.Enter(context.Background()); err != nil {
		t.Fatalf("after the holder left: %v", err)
	} else {
		leave()
	}

	var none *gate.Gate
	leave, err = none.Enter(context.Background())
	if err != nil || none.Size() != 0 {
		t.Fatalf("a nil gate: %v", err)
	}
	leave()
}

// Past MaxWaitingPerSlot waiters per slot a caller is refused at once;
// the waiting are counted while they wait.
func TestGateRefusesWhenTooManyWait(t *testing.T) {
	waiting := prometheus.NewGauge(prometheus.GaugeOpts{Name: "waiting"})
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "refused"}, []string{"reason"})
	g := gate.New(1, "TEST_SIZE", gate.Instruments{Waiting: waiting, Refused: refused})
	leave, err := g.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var refusedNow atomic.Int64
	for range gate.MaxWaitingPerSlot + 5 {
		wg.Go(func() {
			if l, err := g.Enter(ctx); err == nil {
				l()
			} else if ctx.Err() == nil {
				refusedNow.Add(1)
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for refusedNow.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	got := refusedNow.Load()
	for deadline := time.Now().Add(10 * time.Second); testutil.ToFloat64(waiting) != gate.MaxWaitingPerSlot && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	parked := testutil.ToFloat64(waiting)
	cancel()
	leave()
	wg.Wait()
	if got != 5 || testutil.ToFloat64(refused.WithLabelValues("full")) != 5 {
		t.Fatalf("%d refused at once, want 5", got)
	}
	if parked != gate.MaxWaitingPerSlot || testutil.ToFloat64(waiting) != 0 {
		t.Fatalf("waiting gauge %v while parked, %v after", parked, testutil.ToFloat64(waiting))
	}
}
