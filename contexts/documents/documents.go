// Package documents is the documents bounded context: seed 002's
// artifacts — HTML or markdown documents published in a workarea — named
// documents here because OML already calls a claim an artifact. A
// document's versions are admitted knowledge: each is submitted to
// admission as a claim of kind document (key /doc/<id>), held until an
// identity that did not write it approves it (R3), and only then read by
// the workarea's readers, listed, and opened at the document's viewer URL
// (public, password-protected or signed-in readers). Versions continue one
// another whoever writes them, under a base version checked at submission
// and at promotion, as knowledge-base pages do. A draft is its author's
// alone, never reviewed. Comments are coordination on promoted versions,
// visible at once to the workarea's readers. It reaches the access and
// admission contexts only through the ports in internal/app.
package documents

import (
	"context"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/documents/internal/app"
	"github.com/omlhub/oml/contexts/documents/internal/domain"
	"github.com/omlhub/oml/contexts/documents/internal/httpapi"
	"github.com/omlhub/oml/contexts/documents/internal/mcptools"
	"github.com/omlhub/oml/contexts/documents/internal/postgres"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/transport"
)

// The ports other contexts fill and the shapes they exchange.
type (
	// Access is the access context as the documents context needs it.
	Access = app.Access
	// Workarea is a workarea with the caller's scopes there.
	Workarea = app.Workarea
	// Admission is the admission context as the documents context needs it.
	Admission = app.Admission
	// Submission is a document version handed to admission.
	Submission = app.Submission
	// Version is one version of a document.
	Version = domain.Version
	// Shown is what the browser viewer renders.
	Shown = app.Shown
)

// ErrNotFound is what an Admission port returns for a missing version.
var ErrNotFound = app.ErrNotFound

// ErrPasswordRequired is the viewer's answer for a password-protected
// document read without the right password.
var ErrPasswordRequired = app.ErrPasswordRequired

// Deps are what the context needs from the process.
type Deps struct {
	DB        *pg.DB
	Access    Access
	Admission Admission
	PublicURL string
	Now       func() time.Time
}

// Module is the documents context.
type Module struct {
	svc  *app.Service
	http *httpapi.Handlers
}

// New assembles the context.
func New(d Deps) *Module {
	svc := app.New(app.Deps{Access: d.Access, Admission: d.Admission, Repo: postgres.New(d.DB), Tx: d.DB, PublicURL: d.PublicURL, Now: d.Now})
	return &Module{svc: svc, http: httpapi.New(svc)}
}

// Routes registers the HTTP routes (under /v1).
func (m *Module) Routes(r chi.Router) { m.http.Routes(r) }

// Tools registers the MCP tools.
func (m *Module) Tools(t *transport.Tools) { mcptools.Register(t, m.svc) }

// Show is the viewer's read of a document's promoted version: public,
// with the password, or for a signed-in reader (the caller in ctx).
func (m *Module) Show(ctx context.Context, id, password string) (Shown, error) {
	return m.svc.Show(ctx, id, password)
}

// ShowDraft is the viewer's read of the signed-in caller's own draft.
func (m *Module) ShowDraft(ctx context.Context, id string) (Shown, error) {
	return m.svc.ShowDraft(ctx, id)
}
