package app

import (
	"context"
	"sync"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

// Password attempts on the public viewer are bounded: each costs a key
// derivation (tens of milliseconds of CPU), and anyone may send them.
const (
	// passwordFails wrong passwords a document takes in passwordWindow
	// (per replica) before it refuses attempts until the window ends.
	passwordFails  = 5
	passwordWindow = time.Minute
	// passwordHashes is how many key derivations run at once (per replica).
	passwordHashes = 2
	// maxGuarded bounds the documents tracked; past it the oldest windows
	// are forgotten (a reset, never an unbounded map).
	maxGuarded = 10_000
)

// guard throttles password attempts: wrong ones per document, and the key
// derivations running at once.
type guard struct {
	mu    sync.Mutex
	fails map[string]*attempts
	sem   chan struct{}
}

type attempts struct {
	start time.Time
	n     int
}

func newGuard() *guard {
	return &guard{fails: map[string]*attempts{}, sem: make(chan struct{}, passwordHashes)}
}

var errThrottled = errs.Retry(errs.LimitRate, "a password-protected document takes 5 wrong passwords a minute",
	passwordWindow, "too many wrong passwords for this document: try again in a minute")

// check runs try (a password comparison) unless the document is
// throttled, counting a failure.
func (g *guard) check(ctx context.Context, id string, now time.Time, try func() bool) (bool, error) {
	g.mu.Lock()
	a := g.fails[id]
	if a != nil && now.Sub(a.start) >= passwordWindow {
		delete(g.fails, id)
		a = nil
	}
	throttled := a != nil && a.n >= passwordFails
	g.mu.Unlock()
	if throttled {
		return false, errThrottled
	}
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	ok := try()
	<-g.sem
	if ok {
		return true, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.fails) >= maxGuarded {
		clear(g.fails)
	}
	if a := g.fails[id]; a != nil {
		a.n++
	} else {
		g.fails[id] = &attempts{start: now, n: 1}
	}
	return false, nil
}
