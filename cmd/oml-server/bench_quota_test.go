package main

import (
	"fmt"
	"testing"
)

// BenchmarkQuotaCheck measures what quotas cost a write: remember at
// concurrency 1 with no quota set, then with a tenant write quota and a
// request limit on the writing key (both far above the load, so nothing
// is refused and every request takes its tokens), in one run:
//
//	go test -run '^$' -bench QuotaCheck -benchtime 2000x -count 3 ./cmd/oml-server
func BenchmarkQuotaCheck(b *testing.B) {
	e := setupBench(b)
	b.Run("target=remember/quota=none/c=1", func(b *testing.B) {
		e.setQuotas(b, 0, 0)
		e.load(b, loadSpec{Target: "remember", Concurrency: 1, Warmup: 50})
	})
	b.Run("target=remember/quota=set/c=1", func(b *testing.B) {
		e.setQuotas(b, 1_000_000, 1_000_000)
		e.load(b, loadSpec{Target: "remember", Concurrency: 1, Warmup: 50})
	})
	e.setQuotas(b, 0, 0)
}

// setQuotas sets (0: clears) the tenant's write quota and the writer key's
// request limit.
func (e *benchEnv) setQuotas(b *testing.B, writes, requests int) {
	if err := e.callAs(e.adminKey, "PUT", "/v1/quotas", fmt.Sprintf(`{"writes_per_minute":%d}`, writes), nil); err != nil {
		b.Fatal(err)
	}
	if err := e.callAs(e.adminKey, "PUT", "/v1/quotas", fmt.Sprintf(`{"key_id":%q,"requests_per_minute":%d}`, e.writerKeyID, requests), nil); err != nil {
		b.Fatal(err)
	}
}
