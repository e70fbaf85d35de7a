package gate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/gate"
)

// At most the gate's size are in at once, however many ask; each leave
// lets the next one in, and a second call of the same leave frees nothing.
func TestGateLetsItsSizeInAtOnce(t *testing.T) {
	g := gate.New(3, "TEST_SIZE")
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
	g := gate.New(0, "TEST_SIZE")
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
	if !errs.Is(err, errs.Unavailable) || !e.Retryable || e.Rule != "TEST_SIZE: at most 1 at once on this replica" {
		t.Fatalf("waiter past its deadline: %#v", e)
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

// Past MaxWaitingPerSlot waiters per slot a caller is refused at once.
func TestGateRefusesWhenTooManyWait(t *testing.T) {
	g := gate.New(1, "TEST_SIZE")
	leave, err := g.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var refused atomic.Int64
	for range gate.MaxWaitingPerSlot + 5 {
		wg.Go(func() {
			if l, err := g.Enter(ctx); err == nil {
				l()
			} else if ctx.Err() == nil {
				refused.Add(1)
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for refused.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	got := refused.Load()
	cancel()
	leave()
	wg.Wait()
	if got != 5 {
		t.Fatalf("%d refused at once, want 5", got)
	}
}
