// Package knowledge is the knowledge bounded context: each workarea's
// knowledge base, pages under /fs/ that every writer of the workarea may
// add versions to and every reader reads. A page version is admitted
// knowledge: it is submitted to admission as a claim of kind page (its
// path the claim key), held until an identity that did not write it
// approves it (R3), and only then read, listed and recalled. This
// context owns the page rules (paths, bounds, if_version, deletion and
// revert as new versions, history, listings) and what a version carries
// beside its text (the session it was promoted from, stale_after);
// admission owns the text, its review and its lifecycle, and checks a
// version's base against the promoted head at submission and again at
// promotion. Session brains are not here: they are the sessions
// context's, since every rule about one is a rule about its session.
package knowledge

import (
	"context"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/knowledge/internal/app"
	"github.com/omlhub/oml/contexts/knowledge/internal/domain"
	"github.com/omlhub/oml/contexts/knowledge/internal/httpapi"
	"github.com/omlhub/oml/contexts/knowledge/internal/mcptools"
	"github.com/omlhub/oml/contexts/knowledge/internal/postgres"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/transport"
)

// The ports other contexts fill and the shapes they exchange, re-exported
// for cmd/oml-server's wiring.
type (
	// Access is the access context as the knowledge context needs it.
	Access = app.Access
	// Workarea is a workarea with the caller's scopes there.
	Workarea = app.Workarea
	// Admission is the admission context as the knowledge context needs it.
	Admission = app.Admission
	// Submission is a page version handed to admission.
	Submission = app.Submission
	// HeadFilter selects live pages.
	HeadFilter = app.HeadFilter
	// Version is one version of a page.
	Version = domain.Version
	// Page is a page as read.
	Page = app.Page
	// Put is a page write.
	Put = app.Put
	// Listing is a page of versions or pages in one workarea.
	Listing = app.Listing
	// StalePages are a workarea's pages past their stale_after.
	StalePages = app.StalePages
)

// ErrNotFound is what an Admission port returns for a missing page.
var ErrNotFound = app.ErrNotFound

// The states a page version shows.
const (
	StatePromoted = domain.StatePromoted
	StateHeld     = domain.StateHeld
)

// Deps are what the context needs from the process.
type Deps struct {
	DB        *pg.DB
	Access    Access
	Admission Admission
	Now       func() time.Time
}

// Module is the knowledge context.
type Module struct {
	svc  *app.Service
	http *httpapi.Handlers
}

// New assembles the context.
func New(d Deps) *Module {
	svc := app.New(app.Deps{Access: d.Access, Admission: d.Admission, Repo: postgres.New(d.DB), Now: d.Now})
	return &Module{svc: svc, http: httpapi.New(svc)}
}

// Routes registers the HTTP routes (under /v1).
func (m *Module) Routes(r chi.Router) { m.http.Routes(r) }

// Tools registers the MCP tools (brain_history, brain_revert).
func (m *Module) Tools(t *transport.Tools) { mcptools.Register(t, m.svc) }

// Get reads a page (brain_get store project).
func (m *Module) Get(ctx context.Context, workarea, path, version string) (Page, error) {
	return m.svc.Get(ctx, workarea, path, version)
}

// Put submits a page version (brain_put store project, brain_promote);
func (m *Module) Put(ctx context.Context, p Put) (Version, error) {
	return m.svc.Put(ctx, p)
}

// List lists a workarea's live pages (brain_list store project).
func (m *Module) List(ctx context.Context, workarea, prefix, cursor string, limit int) (Listing, error) {
	return m.svc.List(ctx, workarea, prefix, cursor, limit)
}

// Readable lists every live page the caller may read after a position
// (the MCP resources listing).
func (m *Module) Readable(ctx context.Context, afterWorkarea, afterPath string, limit int) ([]Version, error) {
	return m.svc.Readable(ctx, afterWorkarea, afterPath, limit)
}

// Stale lists a workarea's live pages past their stale_after (the
// session brief's stale pages).
func (m *Module) Stale(ctx context.Context, workarea string) (StalePages, error) {
	return m.svc.Stale(ctx, workarea)
}
