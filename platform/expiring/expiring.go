// Package expiring is a small in-process map whose entries expire: for
// answers a server may reuse for a while instead of asking Postgres on
// every request (which subtree indexes exist, how many rows a scope
// reaches). It is bounded: past its size it forgets its expired entries,
// and if none had expired, everything.
package expiring

import (
	"sync"
	"time"
)

// Map maps keys to values for ttl after each Put. The zero Map is not
// usable; call New.
type Map[K comparable, V any] struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu sync.Mutex
	m  map[K]entry[V]
}

type entry[V any] struct {
	v  V
	at time.Time
}

// New returns a map keeping each value for ttl and at most max of them.
func New[K comparable, V any](ttl time.Duration, max int) *Map[K, V] {
	return &Map[K, V]{ttl: ttl, max: max, now: time.Now, m: map[K]entry[V]{}}
}

// Get returns the value put for k, unless there is none or it expired.
func (m *Map[K, V]) Get(k K) (V, bool) {
	m.mu.Lock()
	e, ok := m.m[k]
	m.mu.Unlock()
	if !ok || m.now().Sub(e.at) >= m.ttl {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Put keeps v for k from now.
func (m *Map[K, V]) Put(k K, v V) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.m[k]; !ok && len(m.m) >= m.max {
		for key, e := range m.m {
			if now.Sub(e.at) >= m.ttl {
				delete(m.m, key)
			}
		}
		if len(m.m) >= m.max {
			clear(m.m)
		}
	}
	m.m[k] = entry[V]{v: v, at: now}
}

// Clear forgets every value.
func (m *Map[K, V]) Clear() {
	m.mu.Lock()
	clear(m.m)
	m.mu.Unlock()
}

// Len is how many values the map holds, expired ones included.
func (m *Map[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}
