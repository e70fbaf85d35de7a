package pg_test

import (
	"context"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

// A notification committed on one pool (one replica) wakes the waiters of
// a listener on another; a rolled-back one wakes nobody; after its
// connection is killed the listener makes it again and wakes waiters anew.
func TestListenerAcrossPools(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := pgtest.NewURL(t)
	replica1, err := pg.Open(ctx, url, pg.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer replica1.Close()
	replica2, err := pg.Open(ctx, url, pg.Options{MaxConns: 2, ApplicationName: "oml-listener-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer replica2.Close()

	l := pg.NewListener(replica2, nil, "oml_test")
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- l.Run(runCtx) }()
	defer func() { stop(); <-done }()
	<-l.Ready()
	wake, cancelSub := l.Subscribe("oml_test")
	defer cancelSub()

	expect := func(want string) {
		t.Helper()
		select {
		case got := <-wake:
			if got != want {
				t.Fatalf("woke with %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no wake-up for %q", want)
		}
	}
	if err := replica1.InTx(ctx, func(ctx context.Context) error { return replica1.Notify(ctx, "oml_test", "first") }); err != nil {
		t.Fatal(err)
	}
	expect("first")

	// A rolled-back notify is never delivered.
	_ = replica1.InTx(ctx, func(ctx context.Context) error {
		if err := replica1.Notify(ctx, "oml_test", "rolled-back"); err != nil {
			t.Fatal(err)
		}
		return context.Canceled
	})
	if err := replica1.Notify(ctx, "oml_test", "second"); err != nil {
		t.Fatal(err)
	}
	expect("second")

	// Kill the listening connection: the listener reconnects.
	if _, err := replica1.Pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'oml-listener-test' AND query LIKE 'LISTEN%'`); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	for {
		if err := replica1.Notify(ctx, "oml_test", "after"); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-wake:
			if got == "after" {
				return
			}
		case <-time.After(500 * time.Millisecond):
			continue
		case <-deadline:
			t.Fatal("the listener did not come back after its connection was killed")
		}
	}
}
