// Package inbox is the coordination context: what agents and the human
// see happen and say to each other. It serves the events tail
// (oml_events_tail, GET /v1/events) and seed 002's feed (feed_read,
// signal_append, durable cursors), questions, answers and approvals with
// deadlines (question_post, answer_post, inbox_read, the human's HTTP
// inbox), all views of or appends to the per-tenant journal, never a
// second log, and the notifications trailer with its subscriptions
// (notify_*), delivered once per principal. It reaches the access context
// only through the ports in internal/app.
package inbox

import (
	"context"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/httpapi"
	"github.com/omlhub/oml/contexts/inbox/internal/mcptools"
	"github.com/omlhub/oml/contexts/inbox/internal/postgres"
	"github.com/omlhub/oml/contexts/inbox/internal/wire"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/transport"
)

// The ports other contexts fill, re-exported for cmd/oml-server's wiring.
type (
	// Access is the access context as the inbox needs it.
	Access = app.Access
	// Workarea is a workarea with the caller's access there.
	Workarea = app.Workarea
	// Limits are the configured caps.
	Limits = app.Limits
	// Sessions is the sessions context as the session brief needs it.
	Sessions = app.Sessions
	// PreviousSession is the caller's previous session in a workarea.
	PreviousSession = app.PreviousSession
	// Enrolments is the access context as an enrolment's decision needs
	// it.
	Enrolments = app.Enrolments
	// Search is the retrieval context's search corpus.
	Search = app.Search
	// Pages is the knowledge context as the session brief needs it.
	Pages = app.Pages
	// StalePages is the brief's stale pages section.
	StalePages = app.StalePages
	// StalePage is one page past its stale_after.
	StalePage = app.StalePage
	// EnrolGrant is one grant an enrolment approval gives.
	EnrolGrant = app.EnrolGrant
)

// Deps are what the context needs from the process.
type Deps struct {
	DB *pg.DB
	// Listener carries wake-ups across replicas (LISTEN on WakeChannel);
	// nil leaves waits to re-read every app.RecheckEvery.
	Listener *pg.Listener
	// Sessions gives the session brief the caller's previous session.
	Sessions    Sessions
	Journal     *journal.Journal
	Idempotency *idempotency.Store
	Access      Access
	// Enrolments decides enrolment requests (the access context).
	Enrolments Enrolments
	// Search indexes coordination records for search (retrieval).
	Search Search
	// Pages gives the session brief its stale knowledge-base pages.
	Pages  Pages
	Limits Limits
	Now    func() time.Time
}

// Module is the inbox context.
type Module struct {
	repo  *postgres.Repository
	svc   *app.Service
	http  *httpapi.Handlers
	idem  *idempotency.Store
	quiet *quiet
}

// New assembles the context.
func New(d Deps) *Module {
	repo := postgres.New(d.DB)
	var remote <-chan string // wake-ups of other replicas' inbox writes
	if d.Listener != nil {
		remote, _ = d.Listener.Subscribe(WakeChannel) // for the process's life
	}
	q := newQuiet(remote)
	svc := &app.Service{Access: d.Access, Enrolments: d.Enrolments, Journal: d.Journal, Repo: repo, Notices: repo, Tx: d.DB, Limits: d.Limits, Now: d.Now,
		Wakes: pgWakes{db: d.DB, listener: d.Listener, quiet: q}, Sessions: d.Sessions, Search: d.Search, Pages: d.Pages}
	return &Module{repo: repo, svc: svc, http: httpapi.New(svc, d.Idempotency), idem: d.Idempotency, quiet: q}
}

// Routes registers the HTTP routes (under /v1).
func (m *Module) Routes(r chi.Router) { m.http.Routes(r) }

// Tools registers the MCP tools.
func (m *Module) Tools(t *transport.Tools) { mcptools.Register(t, m.svc, m.idem) }

// EnrolRequest puts an enrolment request in the tenant's admins' inbox, in
// the caller's unit of work, and returns the item's id.
func (m *Module) EnrolRequest(ctx context.Context, tenant, root, rootIDPath, enrolment, reason, peer string, at, deadline time.Time) (string, error) {
	it, err := m.svc.EnrolRequest(ctx, tenant, root, rootIDPath, enrolment, reason, peer, at, deadline)
	return it.ID, err
}

// SweepDue resolves up to limit open items past their deadline as the hub
// (every tenant); every replica runs it, and no item is resolved twice.
func (m *Module) SweepDue(ctx context.Context, limit int) (int, error) {
	return m.svc.Sweep(ctx, "", limit)
}

// DeadlineLag is how long the open item due longest has waited for the
// deadline sweep at now (0 when none is overdue), for /metrics.
func (m *Module) DeadlineLag(ctx context.Context, now time.Time) (time.Duration, error) {
	now = now.Round(time.Microsecond) // as Postgres stores it: none due is 0
	due, err := m.repo.OldestDue(ctx, now)
	if err != nil {
		return 0, err
	}
	return now.Sub(due), nil
}

// WakeChannel is the Postgres channel the inbox notifies on when something
// lands (payload: the tenant id); cmd/oml-server's listener LISTENs on it.
const WakeChannel = "oml_inbox"

// pgWakes is the Wakes port on Postgres LISTEN/NOTIFY.
type pgWakes struct {
	db       *pg.DB
	listener *pg.Listener
	quiet    *quiet
}

func (w pgWakes) Notify(ctx context.Context, tenant string) error {
	if w.quiet != nil {
		pg.AfterCommit(ctx, w.quiet.forget)
	}
	return w.db.Notify(ctx, WakeChannel, tenant)
}

func (w pgWakes) Subscribe() (<-chan string, func()) {
	if w.listener == nil {
		return nil, func() {}
	}
	return w.listener.Subscribe(WakeChannel)
}

// Trailer is the notifications trailer (seed 002, "Notifications on tool
// results"): what is pending for the caller, under notifications, on every
// successful tool result; reading it delivers it.
func (m *Module) Trailer() (*transport.Trailer, error) {
	tr, err := transport.NewTrailer("notifications", func(ctx context.Context) (wire.Notifications, bool, error) {
		c, _ := auth.From(ctx)
		key := c.TenantID + "/" + c.PrincipalID
		epoch, quiet := m.quiet.is(key)
		if quiet {
			return wire.Notifications{}, false, nil
		}
		ps, isQuiet, err := m.svc.DrainQuiet(ctx)
		if isQuiet {
			m.quiet.remember(key, epoch)
		}
		if err != nil || len(ps) == 0 {
			return wire.Notifications{}, false, err
		}
		return wire.ToNotifications(ps), true, nil
	})
	if err != nil {
		return nil, err
	}
	tr.Schema.Description = "present only when something is pending for you; each item is delivered once"
	return tr, nil
}

// QuietFor bounds how long a principal is remembered quiet without a
// wake-up: what a lost notification (a listener reconnecting) can delay.
const QuietFor = 2 * time.Second

// quiet remembers principals with nothing to notify — no attention item,
// no subscription — so a tool call for them costs no query. Only an inbox
// write ends that, and any inbox write forgets every principal: on this
// replica when it commits (pg.AfterCommit), on the others when its NOTIFY
// arrives; QuietFor bounds the rest.
type quiet struct {
	mu    sync.Mutex
	epoch uint64
	seen  map[string]quietMark
	wake  <-chan string
}

type quietMark struct {
	epoch uint64
	at    time.Time
}

func newQuiet(wake <-chan string) *quiet { return &quiet{seen: map[string]quietMark{}, wake: wake} }

// forget ends every remembered quiet (an inbox write committed).
func (q *quiet) forget() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.epoch++
	clear(q.seen)
}

// is reports whether key is remembered quiet now, and the epoch to pass
// to remember after a probe.
func (q *quiet) is(key string) (uint64, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for woke := true; woke; {
		select {
		case <-q.wake: // a write on another replica
			q.epoch++
			clear(q.seen)
		default:
			woke = false
		}
	}
	m, ok := q.seen[key]
	return q.epoch, ok && m.epoch == q.epoch && time.Since(m.at) < QuietFor
}

// remember marks key quiet, unless an inbox write committed since the
// probe began (its epoch moved on).
func (q *quiet) remember(key string, epoch uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if epoch == q.epoch {
		q.seen[key] = quietMark{epoch: epoch, at: time.Now()}
	}
}
