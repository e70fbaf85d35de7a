package app

import (
	"cmp"
	"context"
	"time"

	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/drain"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/metrics"
)

// Wait bounds: seed 002's inbox_wait waits 30 s unless told, 60 s at most.
// A wait reads again every RecheckEvery even without a wake-up, so a lost
// notification costs at most that, never an item.
const (
	DefaultWait  = 30 * time.Second
	MaxWait      = 60 * time.Second
	RecheckEvery = 2 * time.Second
)

// InboxWait is Inbox that waits up to wait for something to land: it
// returns as soon as a read finds an item after q.Since (a new one, or one
// resolved since), or when wait has passed with an empty page. own scopes
// it to the caller's own items (the agent's inbox_wait); the human's
// GET /v1/inbox?wait= waits for anything it may read. wait 0 reads once.
func (s *Service) InboxWait(ctx context.Context, q InboxQuery, wait time.Duration, own bool) (InboxPage, error) {
	c, err := auth.ContentCaller(ctx, "inbox reads")
	if err != nil {
		return InboxPage{}, err
	}
	if wait < 0 || wait > MaxWait {
		return InboxPage{}, errs.Invalid("wait_seconds must be 0–%d", int(MaxWait/time.Second))
	}
	if own {
		q.Actor = cmp.Or(c.Principal, c.KeyID)
	}
	return waitFor(ctx, s.Wakes, "inbox_wait", wait, func() (InboxPage, bool, error) {
		page, err := s.Inbox(ctx, q)
		return page, len(page.Items) > 0, err
	})
}

// waitFor reads until read finds something, fails, or wait has passed,
// reading again on every wake-up and at least every RecheckEvery; a
// cancelled ctx, or the replica starting to drain, ends the wait with the
// last read (the client asks again, on another replica). It subscribes
// before the first read, so a write that lands between a read and the wait
// still wakes it. wait 0 reads once. kind labels the parked-waits gauge.
func waitFor[T any](ctx context.Context, wakes Wakes, kind string, wait time.Duration, read func() (T, bool, error)) (T, error) {
	parked := metrics.LongPolls.WithLabelValues(kind)
	draining := drain.Done(ctx)
	var wake <-chan string
	if wakes != nil {
		var stop func()
		wake, stop = wakes.Subscribe()
		defer stop()
	}
	deadline := time.Now().Add(wait)
	for {
		got, found, err := read()
		left := time.Until(deadline)
		if err != nil || found || left <= 0 {
			return got, err
		}
		timer := time.NewTimer(min(left, RecheckEvery))
		parked.Inc()
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			parked.Dec()
			timer.Stop()
			return got, nil
		case <-draining:
			parked.Dec()
			timer.Stop()
			return got, nil
		}
		parked.Dec()
		timer.Stop()
	}
}
