package pg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listener holds one connection per replica that LISTENs on a fixed set of
// channels and fans each notification out to the waiters of this process,
// so a wait on one replica wakes when another replica commits. NOTIFY is
// delivered at commit, never for a rolled-back write. A lost connection is
// made again; a notification missed meanwhile is not redelivered, so
// waiters must re-check the database at least every interval they can
// afford: a missed wake-up costs one interval, never an item.
type Listener struct {
	db       *DB
	channels []string
	log      *slog.Logger

	mu      sync.Mutex
	waiters map[string]map[chan string]struct{}
	ready   chan struct{} // closed once the first LISTEN holds
	once    sync.Once
}

// NewListener returns a listener on channels (plain identifiers); Run
// serves it.
func NewListener(db *DB, log *slog.Logger, channels ...string) *Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Listener{db: db, channels: channels, log: log, waiters: map[string]map[chan string]struct{}{}, ready: make(chan struct{})}
}

// Ready is closed once the listener first holds its LISTENs.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Subscribe returns a channel that receives the payload of each
// notification on channel (the latest one when the waiter is slow: it is
// a wake-up, not a queue), and the function that ends the subscription.
func (l *Listener) Subscribe(channel string) (<-chan string, func()) {
	c := make(chan string, 1)
	l.mu.Lock()
	if l.waiters[channel] == nil {
		l.waiters[channel] = map[chan string]struct{}{}
	}
	l.waiters[channel][c] = struct{}{}
	l.mu.Unlock()
	return c, func() {
		l.mu.Lock()
		delete(l.waiters[channel], c)
		l.mu.Unlock()
	}
}

// Run listens until ctx ends, making the connection again (after a short
// pause) whenever it is lost.
func (l *Listener) Run(ctx context.Context) error {
	for {
		err := l.listen(ctx)
		if ctx.Err() != nil {
			return nil
		}
		l.log.WarnContext(ctx, "listener connection lost; reconnecting", "error", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

func (l *Listener) listen(ctx context.Context) error {
	conn, err := l.db.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	// The connection leaves the pool: it holds LISTENs that must not leak
	// to other users, and it is closed when this loop ends.
	pc := conn.Hijack()
	defer pc.Close(context.WithoutCancel(ctx))
	for _, ch := range l.channels {
		if _, err := pc.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return fmt.Errorf("listen %s: %w", ch, err)
		}
	}
	l.once.Do(func() { close(l.ready) })
	for {
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.fanOut(n.Channel, n.Payload)
	}
}

func (l *Listener) fanOut(channel, payload string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.waiters[channel] {
		select {
		case c <- payload:
		default: // a wake-up is pending already; replace it with the latest
			select {
			case <-c:
			default:
			}
			c <- payload
		}
	}
}

// Notify sends payload on channel in the caller's unit of work (delivered
// when it commits) or at once without one.
func (db *DB) Notify(ctx context.Context, channel, payload string) error {
	if channel == "" {
		return errors.New("pg: notify on no channel")
	}
	_, err := db.Conn(ctx).Exec(ctx, "SELECT pg_notify($1, $2)", channel, payload)
	return err
}
