// Package auth carries the authenticated caller through a request's
// context. The access context resolves bearer keys; everything else reads
// the caller from here, never from a request field (D6).
package auth

import (
	"context"
	"sync"

	"github.com/omlhub/oml/platform/errs"
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

// memo holds what is computed once per authenticated request.
type memo struct {
	mu sync.Mutex
	v  map[any]any
}

type memoKey struct{}

// With returns ctx carrying c, and a fresh per-request memo (see [Memo]).
func With(ctx context.Context, c Caller) context.Context {
	ctx = context.WithValue(ctx, callerKey{}, c)
	return context.WithValue(ctx, memoKey{}, &memo{v: map[any]any{}})
}

// FreshMemo returns ctx with an empty memo when it carries a caller: a unit
// of work (each attempt of one) reads what it memoizes anew, inside its
// transaction, never a value read before it or by a failed attempt.
func FreshMemo(ctx context.Context) context.Context {
	if _, ok := ctx.Value(memoKey{}).(*memo); !ok {
		return ctx
	}
	return context.WithValue(ctx, memoKey{}, &memo{v: map[any]any{}})
}

// Memo returns the value load computes for key, once per authenticated
// request (per [With]): later calls with the same key get the first
// result. An error is not kept, so a later call loads again. Without a
// caller in ctx it simply calls load.
func Memo[T any](ctx context.Context, key any, load func() (T, error)) (T, error) {
	m, ok := ctx.Value(memoKey{}).(*memo)
	if !ok {
		return load()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.v[key]; ok {
		return v.(T), nil
	}
	v, err := load()
	if err == nil {
		m.v[key] = v
	}
	return v, err
}

// From returns the caller carried by ctx.
func From(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// Required returns the caller carried by ctx, or auth.missing_key when
// there is none.
func Required(ctx context.Context) (Caller, error) {
	c, ok := From(ctx)
	if !ok {
		return c, errs.New(errs.AuthMissing, "every call presents a bearer key; there is no anonymous call", "no authenticated caller")
	}
	return c, nil
}

// RuleOperator is the rule an operator key's content verb is refused by.
const RuleOperator = "operator never writes, reads or reviews content (D9)"

// ContentCaller returns the caller of a content verb (what names it in the
// refusal): no caller is auth.missing_key, an operator key
// access.verb_ceiling.
func ContentCaller(ctx context.Context, what string) (Caller, error) {
	c, err := Required(ctx)
	if err != nil {
		return c, err
	}
	if c.Role == "operator" {
		return c, errs.New(errs.VerbCeiling, RuleOperator, "operator keys have no %s", what)
	}
	return c, nil
}
