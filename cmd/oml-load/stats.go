package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// stats collects latencies and outcomes per operation.
type stats struct {
	mu  sync.Mutex
	ops map[string]*opStats
	// window is the latencies since the last interval line (-every), by
	// operation.
	window map[string][]time.Duration
}

type opStats struct {
	latencies []time.Duration // of completed operations (ok or refused)
	outcomes  map[string]int  // by label: ok, a code, transport, http_5xx
	retried   int             // operations that took more than one attempt
}

func newStats() *stats {
	return &stats{ops: map[string]*opStats{}, window: map[string][]time.Duration{}}
}

func (s *stats) record(op string, o outcome, attempts int, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.ops[op]
	if st == nil {
		st = &opStats{outcomes: map[string]int{}}
		s.ops[op] = st
	}
	st.latencies = append(st.latencies, took)
	s.window[op] = append(s.window[op], took)
	st.outcomes[o.label()]++
	if attempts > 1 {
		st.retried++
	}
}

// snapshot returns a copy of the totals.
func (s *stats) snapshot() map[string]*opStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]*opStats{}
	for k, v := range s.ops {
		out[k] = &opStats{latencies: slices.Clone(v.latencies), outcomes: maps.Clone(v.outcomes), retried: v.retried}
	}
	return out
}

// takeWindow returns the latencies since the last call, all of them and
// by operation, each sorted.
func (s *stats) takeWindow() (all []time.Duration, byOp map[string][]time.Duration) {
	s.mu.Lock()
	byOp = s.window
	s.window = map[string][]time.Duration{}
	s.mu.Unlock()
	for _, l := range byOp {
		slices.Sort(l)
		all = append(all, l...)
	}
	slices.Sort(all)
	return all, byOp
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * q)
	return sorted[i]
}

// OpReport is one operation's line of the report.
type OpReport struct {
	Op       string         `json:"op"`
	Count    int            `json:"count"`
	OK       int            `json:"ok"`
	Retried  int            `json:"retried"`
	P50ms    float64        `json:"p50_ms"`
	P99ms    float64        `json:"p99_ms"`
	Outcomes map[string]int `json:"outcomes"`
}

func reportOps(snap map[string]*opStats) []OpReport {
	var out []OpReport
	for _, op := range slices.Sorted(maps.Keys(snap)) {
		st := snap[op]
		lat := slices.Clone(st.latencies)
		slices.Sort(lat)
		out = append(out, OpReport{Op: op, Count: len(lat), OK: st.outcomes["ok"], Retried: st.retried,
			P50ms: float64(quantile(lat, .5).Microseconds()) / 1000, P99ms: float64(quantile(lat, .99).Microseconds()) / 1000,
			Outcomes: st.outcomes})
	}
	return out
}

// fiveXX counts answers no client could act on: 5xx statuses and
// transport failures, by operation, and internal errors.
func fiveXX(ops []OpReport) int {
	n := 0
	for _, r := range ops {
		for label, c := range r.Outcomes {
			if label == "transport" || strings.HasPrefix(label, "http_5") || label == "internal" || label == "service.unavailable" {
				n += c
			}
		}
	}
	return n
}

func printOps(w io.Writer, ops []OpReport, elapsed time.Duration) {
	total := 0
	fmt.Fprintf(w, "| operation | count | ok | retried | p50 ms | p99 ms | other outcomes |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range ops {
		total += r.Count
		var other []string
		for _, k := range slices.Sorted(maps.Keys(r.Outcomes)) {
			if k != "ok" {
				other = append(other, fmt.Sprintf("%s %d", k, r.Outcomes[k]))
			}
		}
		sort.Strings(other)
		fmt.Fprintf(w, "| %s | %d | %d | %d | %.1f | %.1f | %s |\n", r.Op, r.Count, r.OK, r.Retried, r.P50ms, r.P99ms, strings.Join(other, ", "))
	}
	fmt.Fprintf(w, "\n%d operations in %s: %.0f/s\n", total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds())
}

// ms is d in milliseconds to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
