package expiring

import (
	"sync"
	"testing"
	"time"
)

func TestMap(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	m := New[string, int](time.Minute, 3)
	m.now = func() time.Time { return now }

	if _, ok := m.Get("a"); ok {
		t.Fatal("an empty map answered")
	}
	m.Put("a", 1)
	if v, ok := m.Get("a"); !ok || v != 1 {
		t.Fatalf("get a: %d, %v", v, ok)
	}
	now = now.Add(time.Minute - time.Nanosecond)
	if _, ok := m.Get("a"); !ok {
		t.Fatal("a expired early")
	}
	now = now.Add(time.Nanosecond)
	if v, ok := m.Get("a"); ok || v != 0 {
		t.Fatalf("a after its ttl: %d, %v", v, ok)
	}
	m.Put("a", 2)
	if v, _ := m.Get("a"); v != 2 {
		t.Fatalf("a put again: %d", v)
	}

	// Full: a new key first drops the expired entries.
	now = now.Add(30 * time.Second)
	m.Put("b", 3)
	m.Put("c", 4)
	now = now.Add(31 * time.Second) // a expired, b and c not
	m.Put("d", 5)
	if _, ok := m.m["a"]; ok || m.Len() != 3 {
		t.Fatalf("after a put into a full map with one expired: %v", m.m)
	}
	// Full with nothing expired: it starts over. An existing key's update
	// never does.
	m.Put("d", 6)
	if m.Len() != 3 {
		t.Fatalf("an update emptied the map: %v", m.m)
	}
	m.Put("e", 7)
	if m.Len() != 1 {
		t.Fatalf("a put into a full map: %v", m.m)
	}
	if v, ok := m.Get("e"); !ok || v != 7 {
		t.Fatalf("e: %d, %v", v, ok)
	}
	m.Clear()
	if _, ok := m.Get("e"); ok || m.Len() != 0 {
		t.Fatal("clear left e")
	}
}

func TestMapConcurrent(t *testing.T) {
	m := New[int, int](time.Minute, 100)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				m.Put((g*1000+i)%250, i)
				m.Get(i % 250)
			}
		}()
	}
	wg.Wait()
	if m.Len() > 100 {
		t.Fatalf("%d entries, bound 100", m.Len())
	}
}
