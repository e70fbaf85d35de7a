package inbox

import "testing"

// A principal is remembered quiet until an inbox write: one committed here
// (forget), one on another replica (a wake-up), or one that committed
// while the probe ran (the epoch moved on) all end it.
func TestQuiet(t *testing.T) {
	t.Parallel()
	wake := make(chan string, 1)
	q := newQuiet(wake)
	epoch, ok := q.is("tn/alice")
	if ok {
		t.Fatal("quiet before any probe")
	}
	q.remember("tn/alice", epoch)
	if _, ok := q.is("tn/alice"); !ok {
		t.Fatal("not remembered")
	}
	q.forget()
	if _, ok := q.is("tn/alice"); ok {
		t.Fatal("a local write did not end it")
	}
	epoch, _ = q.is("tn/alice")
	q.remember("tn/alice", epoch)
	wake <- "tn"
	if _, ok := q.is("tn/alice"); ok {
		t.Fatal("another replica's write did not end it")
	}
	epoch, _ = q.is("tn/alice")
	q.forget() // a write commits while the probe runs
	q.remember("tn/alice", epoch)
	if _, ok := q.is("tn/alice"); ok {
		t.Fatal("remembered quiet across a write that committed during the probe")
	}
}
