// Package sessions is the sessions bounded context: agents' work sessions
// in a workarea, owned by a principal and named per owner, ended with a
// handoff note, adopted when ended or forked when running, reassigned by
// an admin, each key's active session per workarea (the transport is
// stateless, so that pointer lives here), and session brains: each
// session's private working state. Brains live here, not beside the
// knowledge base, because every rule about one is a rule about its
// session — its owner, its status, adoption (the brain goes with the
// session), fork (a copy under the source's lock) and prune (it goes).
// It reaches the access context and the journal only through the ports in
// internal/app.
package sessions

import (
	"context"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/sessions/internal/app"
	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/contexts/sessions/internal/httpapi"
	"github.com/omlhub/oml/contexts/sessions/internal/mcptools"
	"github.com/omlhub/oml/contexts/sessions/internal/postgres"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/transport"
)

// The ports other contexts fill, re-exported for cmd/oml-server's wiring.
type (
	// Access is the access context as the sessions context needs it.
	Access = app.Access
	// Workarea is a workarea with the caller's scopes there.
	Workarea = app.Workarea
	// KeyAt is another key of the caller's tenant at a workarea.
	KeyAt = app.KeyAt
	// BrainSearch is the retrieval context's search corpus for brains.
	BrainSearch = app.BrainSearch
	// KnowledgeBase is the knowledge context as the brain tools reach it.
	KnowledgeBase = app.KnowledgeBase
	// KBPage is a knowledge-base page version as the brain tools show it.
	KBPage = app.KBPage
	// HeldPage is one of the caller's page versions waiting for review.
	HeldPage = app.HeldPage
	// PagePut is a page write.
	PagePut = app.PagePut
	// PageList is a page of a knowledge base's listing.
	PageList = app.PageList
	// Session is an agent's work session, as other contexts read it.
	Session = domain.Session
)

// The brain's conventional recovery document (seed 002).
const RecoveryPath = domain.RecoveryPath

// Deps are what the context needs from the process.
type Deps struct {
	DB          *pg.DB
	Journal     *journal.Journal
	Idempotency *idempotency.Store
	Access      Access
	KB          KnowledgeBase
	Search      BrainSearch
	Now         func() time.Time
}

// Module is the sessions context.
type Module struct {
	svc  *app.Service
	http *httpapi.Handlers
	idem *idempotency.Store
}

// New assembles the context.
func New(d Deps) *Module {
	svc := app.New(app.Deps{Repo: postgres.New(d.DB), Brains: postgres.NewBrains(d.DB), KB: d.KB, Search: d.Search, Access: d.Access, Journal: d.Journal, Tx: d.DB, Now: d.Now})
	return &Module{svc: svc, http: httpapi.New(svc), idem: d.Idempotency}
}

// Routes registers the HTTP routes (under /v1).
func (m *Module) Routes(r chi.Router) { m.http.Routes(r) }

// Tools registers the MCP tools.
func (m *Module) Tools(t *transport.Tools) {
	mcptools.Register(t, m.svc, m.idem)
	mcptools.RegisterBrains(t, m.svc)
}

// Previous returns the caller's most recently active session in the
// workarea other than the one its key works now (the session brief's
// previous_session); ok is false when there is none.
func (m *Module) Previous(ctx context.Context, workareaID string) (Session, bool, error) {
	return m.svc.Previous(ctx, workareaID)
}

// OwnsSession reports whether a session is the caller principal's (not
// pruned).
func (m *Module) OwnsSession(ctx context.Context, id string) (bool, error) {
	return m.svc.OwnsSession(ctx, id)
}

// OwnSessions lists the caller principal's sessions that are not pruned,
// the most recently active first, at most limit (search's brains).
func (m *Module) OwnSessions(ctx context.Context, limit int) ([]string, error) {
	return m.svc.OwnSessions(ctx, limit)
}
