// Package inbox is the coordination context: what agents and the human
// see happen and say to each other. Today it serves the events tail
// (oml_events_tail, GET /v1/events), a filtered view of the per-tenant
// journal, never a second log; seed 002's feed, questions, approvals,
// deadlines and notifications belong here next. It reaches the access
// context and the journal only through the ports in internal/app.
package inbox

import (
	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/httpapi"
	"github.com/omlhub/oml/contexts/inbox/internal/mcptools"
	"github.com/omlhub/oml/platform/transport"
)

// The ports other contexts fill, re-exported for cmd/oml-server's wiring.
type (
	// Access is the access context as the inbox needs it.
	Access = app.Access
	// Workarea is a workarea with the caller's read access there.
	Workarea = app.Workarea
	// Journal reads the per-tenant journal.
	Journal = app.Journal
)

// Deps are what the context needs from the process.
type Deps struct {
	Access  Access
	Journal Journal
}

// Module is the inbox context.
type Module struct {
	svc  *app.Service
	http *httpapi.Handlers
}

// New assembles the context.
func New(d Deps) *Module {
	svc := &app.Service{Access: d.Access, Journal: d.Journal}
	return &Module{svc: svc, http: httpapi.New(svc)}
}

// Routes registers the HTTP routes (under /v1).
func (m *Module) Routes(r chi.Router) { m.http.Routes(r) }

// Tools registers the MCP tools.
func (m *Module) Tools(t *transport.Tools) { mcptools.Register(t, m.svc) }
