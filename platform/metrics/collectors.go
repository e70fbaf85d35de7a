package metrics

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// poolCollector reads the database pool's statistics on each scrape.
type poolCollector struct {
	pool                                        *pgxpool.Pool
	conns, max, acquires, empty, canceled, wait *prometheus.Desc
}

// NewPoolCollector exports pool's use and waits: connections by state,
// the bound, acquisitions, acquisitions that had to wait for a connection
// (the pool was empty) and the total time spent acquiring.
func NewPoolCollector(pool *pgxpool.Pool) prometheus.Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(ns+"_db_pool_"+name, help, labels, nil)
	}
	return &poolCollector{
		pool:     pool,
		conns:    d("connections", "Database pool connections by state (acquired, idle, constructing).", "state"),
		max:      d("max_connections", "The database pool's bound (OML_DB_MAX_CONNS)."),
		acquires: d("acquires_total", "Connections acquired from the pool."),
		empty:    d("empty_acquires_total", "Acquisitions that waited because no connection was idle."),
		canceled: d("canceled_acquires_total", "Acquisitions canceled before a connection was free."),
		wait:     d("acquire_seconds_total", "Seconds spent acquiring connections (waits included)."),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.conns, c.max, c.acquires, c.empty, c.canceled, c.wait} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(s.AcquiredConns()), "acquired")
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(s.IdleConns()), "idle")
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(s.ConstructingConns()), "constructing")
	ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(c.acquires, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(c.empty, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(c.canceled, prometheus.CounterValue, float64(s.CanceledAcquireCount()))
	ch <- prometheus.MustNewConstMetric(c.wait, prometheus.CounterValue, s.AcquireDuration().Seconds())
}

// State is what the state collector reads from the database on a scrape.
type State struct {
	// QueueDepth counts held items awaiting review, by tenant id.
	QueueDepth func(ctx context.Context) (map[string]int64, error)
	// Overdue is, by sweep, how long the oldest row a sweep should have
	// settled has been due (0 when none is): the sweepers' lag.
	Overdue func(ctx context.Context) (map[string]time.Duration, error)
}

type stateCollector struct {
	s          State
	queue, lag *prometheus.Desc
}

// NewStateCollector exports the review queue's depth per tenant and the
// sweepers' lag, read on each scrape (bounded to a few seconds; a failed
// read is reported to the scraper and the other families are served).
func NewStateCollector(s State) prometheus.Collector {
	return &stateCollector{
		s: s,
		queue: prometheus.NewDesc(ns+"_review_queue_depth", "Held items awaiting review, by tenant.",
			[]string{"tenant"}, nil),
		lag: prometheus.NewDesc(ns+"_sweeper_lag_seconds",
			"How long the oldest row a sweep should have settled has been due, by sweep (0: none overdue).",
			[]string{"sweep"}, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.queue
	ch <- c.lag
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := scrapeContext()
	defer cancel()
	if depth, err := c.s.QueueDepth(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(c.queue, err)
	} else {
		for tenant, n := range depth {
			ch <- prometheus.MustNewConstMetric(c.queue, prometheus.GaugeValue, float64(n), tenant)
		}
	}
	if lag, err := c.s.Overdue(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(c.lag, err)
	} else {
		for sweep, d := range lag {
			ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, max(d, 0).Seconds(), sweep)
		}
	}
}
