// Package auth carries the authenticated caller through a request's
// context. The access context resolves bearer keys; everything else reads
// the caller from here, never from a request field (D6).
package auth

import (
	"context"
)

// Caller is the identity behind a bearer key.
type Caller struct {
	TenantID    string
	KeyID       string
	PrincipalID string
	Principal   string
	Role        string
}

type callerKey struct{}

// With returns ctx carrying c.
func With(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// From returns the caller carried by ctx.
func From(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
