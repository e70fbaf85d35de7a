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
	// passwordFails attempts a document takes in passwordWindow (per
	// replica) before it refuses them until the window ends; an attempt
	// counts from its start, and a right password gives its place back.
	passwordFails  = 5
	passwordWindow = time.Minute
	// passwordHashes is how many key derivations run at once (per replica).
	passwordHashes = 2
	// maxGuarded bounds the documents tracked: past it, expired windows
	// are dropped, and a new document is refused until one expires.
	maxGuarded = 10_000
)

// guard throttles password attempts: per document, and the key
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

var errThrottled = errs.Retry(errs.LimitRate, "a password-protected document takes 5 password attempts a minute",
	passwordWindow, "too many password attempts for this document: try again in a minute")

// reserve counts an attempt on id before it runs, so concurrent attempts
// cannot all pass a check made before any of them failed.
func (g *guard) reserve(id string, now time.Time) (*attempts, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := g.fails[id]
	if a != nil && now.Sub(a.start) >= passwordWindow {
		delete(g.fails, id)
		a = nil
	}
	if a == nil {
		if len(g.fails) >= maxGuarded {
			for k, x := range g.fails {
				if now.Sub(x.start) >= passwordWindow {
					delete(g.fails, k)
				}
			}
			if len(g.fails) >= maxGuarded {
				return nil, errThrottled
			}
		}
		a = &attempts{start: now}
		g.fails[id] = a
	}
	if a.n >= passwordFails {
		return nil, errThrottled
	}
	a.n++
	return a, nil
}

// check runs try (a password comparison) as one reserved attempt on id.
func (g *guard) check(ctx context.Context, id string, now time.Time, try func() bool) (bool, error) {
	a, err := g.reserve(id, now)
	if err != nil {
		return false, err
	}
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		g.release(a)
		return false, ctx.Err()
	}
	ok := try()
	<-g.sem
	if ok {
		g.release(a)
	}
	return ok, nil
}

// release gives a reserved attempt back (a right password, a cancelled
// wait).
func (g *guard) release(a *attempts) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if a.n > 0 {
		a.n--
	}
}
