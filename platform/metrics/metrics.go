// Package metrics holds the process's Prometheus instruments and the
// registry /metrics serves (docs/OPERATIONS.md lists every family and what
// to alert on). Instruments are package variables so that any layer can
// count without a dependency threaded through it; a [Registry] gathers
// them with the collectors that read state on each scrape (the database
// pool, the review queue, the sweepers' lag).
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const ns = "oml"

// Latency buckets, in seconds: from a cached read (1 ms) to a long-poll's
// upper bound.
var latency = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

var (
	// HTTPRequests counts requests by route pattern (never the raw path:
	// ids would make a series per row), method and status.
	HTTPRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "http_requests_total", Help: "HTTP requests by route pattern, method and status.",
	}, []string{"route", "method", "status"})
	// HTTPDuration is request latency by route pattern and method.
	HTTPDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Name: "http_request_duration_seconds", Help: "HTTP request latency by route pattern and method.",
		Buckets: latency,
	}, []string{"route", "method"})
	// ToolCalls counts MCP tool calls by tool and outcome (ok, refused,
	// internal).
	ToolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "mcp_tool_calls_total", Help: "MCP tool calls by tool and outcome (ok, refused, internal).",
	}, []string{"tool", "outcome"})
	// ToolDuration is MCP tool latency by tool.
	ToolDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Name: "mcp_tool_duration_seconds", Help: "MCP tool call latency by tool.",
		Buckets: latency,
	}, []string{"tool"})
	// Refusals counts typed refusals by error code and surface (http,
	// mcp), internal errors included.
	Refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "refusals_total", Help: "Typed refusals by error code and surface (http, mcp).",
	}, []string{"code", "surface"})
	// JournalAppends counts events appended to tenants' journals
	// (committed or not: a rolled-back transaction's append is counted).
	JournalAppends = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Name: "journal_appends_total", Help: "Events appended to tenant journals (in transactions that may roll back).",
	})
	// JournalPasses counts the sequencer's passes (platform/journal): each
	// chains every pending event of one tenant under one lock of its head.
	// An error leaves the events pending for the next pass or the sweep.
	JournalPasses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "journal_sequencer_passes_total", Help: "Sequencer passes chaining a tenant's pending journal events, by outcome (ok, error).",
	}, []string{"outcome"})
	// JournalChained counts events the sequencer chained after their
	// transaction committed.
	JournalChained = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Name: "journal_chained_total", Help: "Pending journal events chained by the sequencer.",
	})
	// UploadsInFlight is the number of attachment parts being received.
	UploadsInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: ns, Name: "uploads_in_flight", Help: "Attachment parts being received now.",
	})
	// UploadBytesInFlight is the bytes received so far by the parts in
	// flight.
	UploadBytesInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: ns, Name: "upload_bytes_in_flight", Help: "Bytes received so far by the attachment parts in flight.",
	})
	// UploadBytes counts attachment bytes received (parts completed or
	// not).
	UploadBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Name: "upload_bytes_total", Help: "Attachment bytes received.",
	})
	// LongPolls is the number of waits (inbox_wait, notify_wait) parked
	// now, by kind.
	LongPolls = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: ns, Name: "long_polls_waiting", Help: "Long-polls parked now, by kind (inbox_wait, notify_wait).",
	}, []string{"kind"})
	// RecallsWaiting is the recalls waiting for a turn now
	// (OML_RECALL_CONCURRENCY).
	RecallsWaiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: ns, Name: "recalls_waiting", Help: "Recalls waiting for a turn now (OML_RECALL_CONCURRENCY).",
	})
	// RecallTurnsRefused counts recalls refused a turn, by reason (full,
	// ended, timeout).
	RecallTurnsRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "recall_turns_refused_total", Help: "Recalls refused a turn, by reason: full (too many waiting), ended (the request ended first), timeout (10 s passed).",
	}, []string{"reason"})
	// SweeperRuns counts housekeeping sweeps by sweep and outcome (ok,
	// error).
	SweeperRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "sweeper_runs_total", Help: "Housekeeping sweeps by sweep and outcome (ok, error).",
	}, []string{"sweep", "outcome"})
	// SweeperItems counts rows the sweeps settled or deleted.
	SweeperItems = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "sweeper_items_total", Help: "Rows settled or deleted by the housekeeping sweeps, by sweep.",
	}, []string{"sweep"})
	// EmbedderCalls counts embedding calls by outcome (ok, error).
	EmbedderCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "embedder_calls_total", Help: "Embedder calls by outcome (ok, error).",
	}, []string{"outcome"})
	// EmbedderDuration is embedding call latency.
	EmbedderDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: ns, Name: "embedder_duration_seconds", Help: "Embedder call latency.",
		Buckets: latency,
	})
	// Ready is 1 while the replica takes traffic, 0 while it drains or a
	// dependency is unreachable (as /readyz last answered).
	Ready = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: ns, Name: "ready", Help: "1 while /readyz last answered ready, 0 while draining or a dependency is unreachable.",
	})
)

func init() {
	// Outcomes that may never happen in a run still get a series, so that
	// a rate() over them is 0 rather than absent.
	EmbedderCalls.WithLabelValues("ok")
	JournalPasses.WithLabelValues("ok")
	JournalPasses.WithLabelValues("error")
	EmbedderCalls.WithLabelValues("error")
	LongPolls.WithLabelValues("inbox_wait")
	LongPolls.WithLabelValues("notify_wait")
	for _, reason := range []string{"full", "ended", "timeout"} {
		RecallTurnsRefused.WithLabelValues(reason)
	}
}

// instruments are the package's instruments, in every registry.
func instruments() []prometheus.Collector {
	return []prometheus.Collector{HTTPRequests, HTTPDuration, ToolCalls, ToolDuration, Refusals, JournalAppends,
		JournalPasses, JournalChained,
		UploadsInFlight, UploadBytesInFlight, UploadBytes, LongPolls, RecallsWaiting, RecallTurnsRefused, SweeperRuns, SweeperItems, EmbedderCalls,
		EmbedderDuration, Ready}
}

// NewRegistry returns a registry with the package's instruments, the Go
// runtime's and the process's, and extra.
func NewRegistry(extra ...prometheus.Collector) (*prometheus.Registry, error) {
	r := prometheus.NewRegistry()
	cs := append(instruments(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, c := range append(cs, extra...) {
		if err := r.Register(c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Handler serves r in the Prometheus text format. A failing collector is
// logged in its metric's place and the rest are served. A scrape reads
// the database (the review queue, the sweeps' lag): at most two run at
// once, a third is answered 503.
func Handler(r *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(r, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, Timeout: 10 * time.Second,
		MaxRequestsInFlight: 2})
}

// Since observes the seconds since start on h.
func Since(h prometheus.Observer, start time.Time) { h.Observe(time.Since(start).Seconds()) }

// scrapeTimeout bounds a collector's database reads.
const scrapeTimeout = 3 * time.Second

func scrapeContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), scrapeTimeout)
}
