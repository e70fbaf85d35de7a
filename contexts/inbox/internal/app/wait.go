package app

import (
	"cmp"
	"context"
	"time"

	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
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
	// Subscribe before the first read, so a write that lands between the
	// read and the wait still wakes it.
	var wake <-chan string
	if s.Wakes != nil {
		var stop func()
		wake, stop = s.Wakes.Subscribe()
		defer stop()
	}
	deadline := time.Now().Add(wait)
	for {
		page, err := s.Inbox(ctx, q)
		left := time.Until(deadline)
		if err != nil || len(page.Items) > 0 || left <= 0 {
			return page, err
		}
		timer := time.NewTimer(min(left, RecheckEvery))
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return page, nil
		}
		timer.Stop()
	}
}
