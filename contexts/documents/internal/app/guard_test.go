package app

import (
	"context"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

func TestGuardThrottlesWrongPasswords(t *testing.T) {
	g := newGuard()
	now := time.Unix(1_800_000_000, 0)
	wrong := func() bool { return false }
	for i := range passwordFails {
		if ok, err := g.check(context.Background(), "doc_a", now, wrong); ok || err != nil {
			t.Fatalf("attempt %d: %v %v", i, ok, err)
		}
	}
	if _, err := g.check(context.Background(), "doc_a", now, func() bool { return true }); !errs.Is(err, errs.LimitRate) {
		t.Fatalf("after %d wrong passwords: %v", passwordFails, err)
	}
	if ok, err := g.check(context.Background(), "doc_b", now, func() bool { return true }); !ok || err != nil {
		t.Fatalf("another document: %v %v", ok, err)
	}
	if ok, err := g.check(context.Background(), "doc_a", now.Add(passwordWindow), func() bool { return true }); !ok || err != nil {
		t.Fatalf("after the window: %v %v", ok, err)
	}
}

func TestGuardCountsConcurrentAttempts(t *testing.T) {
	g := newGuard()
	now := time.Unix(1_800_000_000, 0)
	release := make(chan struct{})
	results := make(chan error, 20)
	for range 20 {
		go func() {
			_, err := g.check(context.Background(), "doc_a", now, func() bool { <-release; return false })
			results <- err
		}()
	}
	throttled := 0
	for range 20 - passwordFails {
		if err := <-results; errs.Is(err, errs.LimitRate) {
			throttled++
		}
	}
	close(release)
	for range passwordFails {
		if err := <-results; err != nil {
			t.Fatalf("a reserved attempt: %v", err)
		}
	}
	if throttled != 20-passwordFails {
		t.Fatalf("%d of 20 concurrent attempts throttled, want %d", throttled, 20-passwordFails)
	}
}
