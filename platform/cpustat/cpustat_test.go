package cpustat

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	got, err := parse("cpu  100 2 30 9999 7 4 5 6 0 0")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Times{Busy: 141 * 10 * time.Millisecond, Steal: 60 * time.Millisecond}); got != want {
		t.Fatalf("parse = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "cpu 1 2 3", "cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 x 4 5 6 7 8", "cpu 1 2 -3 4 5 6 7 8", "cpu 1 2 3 4 5 6 7 99999999999999999999", "cpu 1 2 3 4 5 6 7 8\x00"} {
		if _, err := parse(bad); err == nil {
			t.Errorf("parse(%q) accepted", bad)
		}
	}
}

func TestReadCountsThisProcess(t *testing.T) {
	t0, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	for x, deadline := 0, time.Now().Add(50*time.Millisecond); time.Now().Before(deadline); x++ {
		_ = x * x
	}
	t1, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	d := t1.Sub(t0)
	if d.Self <= 0 || d.Busy < 0 || d.Steal < 0 {
		t.Fatalf("spent %+v after spinning", d)
	}
}
