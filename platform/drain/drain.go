// Package drain carries a replica's drain signal to the requests it is
// serving. On SIGTERM the server stops being ready, closes the signal and
// lets in-flight requests finish: a write completes as usual, while a
// long-poll returns at once with what it has, so its client reconnects to
// another replica instead of holding this one until its wait runs out.
package drain

import "context"

type key struct{}

// With returns ctx carrying done, closed when the replica starts draining.
func With(ctx context.Context, done <-chan struct{}) context.Context {
	return context.WithValue(ctx, key{}, done)
}

// Done is the drain signal ctx carries: a channel closed when the replica
// drains, or nil (never ready) when ctx carries none.
func Done(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(key{}).(<-chan struct{})
	return ch
}
