package auth

import (
	"context"
	"errors"
	"testing"
)

func TestMemo(t *testing.T) {
	t.Parallel()
	ctx := With(context.Background(), Caller{KeyID: "key_1"})
	calls := 0
	load := func() (int, error) { calls++; return calls, nil }
	if a, _ := Memo(ctx, "k", load); a != 1 {
		t.Fatal(a)
	}
	if b, _ := Memo(ctx, "k", load); b != 1 || calls != 1 {
		t.Fatalf("second call loaded again: %d, %d calls", b, calls)
	}
	// A new request has a new memo.
	if c, _ := Memo(With(ctx, Caller{KeyID: "key_2"}), "k", load); c != 2 {
		t.Fatal(c)
	}
	// Errors are not kept.
	failing := func() (int, error) { calls++; return 0, errors.New("down") }
	if _, err := Memo(ctx, "e", failing); err == nil {
		t.Fatal("no error")
	}
	if _, err := Memo(ctx, "e", failing); err == nil || calls != 4 {
		t.Fatalf("the error was kept: %d calls", calls)
	}
	// Without a caller it just loads.
	if d, _ := Memo(context.Background(), "k", load); d != 5 {
		t.Fatal(d)
	}
}

func TestFreshMemo(t *testing.T) {
	t.Parallel()
	ctx := With(context.Background(), Caller{KeyID: "key_1"})
	calls := 0
	load := func() (int, error) { calls++; return calls, nil }
	_, _ = Memo(ctx, "k", load)
	if v, _ := Memo(FreshMemo(ctx), "k", load); v != 2 {
		t.Fatalf("a fresh memo kept the old value: %d", v)
	}
	if v, _ := Memo(ctx, "k", load); v != 1 {
		t.Fatalf("the outer memo changed: %d", v)
	}
	if got := FreshMemo(context.Background()); got.Value(memoKey{}) != nil {
		t.Fatal("a memo without a caller")
	}
}
