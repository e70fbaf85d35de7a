// Package lineage is the lineage bounded context: declared derives_from
// between artifacts, claim↔claim and workarea↔workarea edges (proposed,
// then ratified through the serve ceremony by someone other than the
// proposer), the closures review independence (R2) is checked against,
// and the scoped graph read.
package lineage

import (
	"context"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/lineage/internal/app"
	"github.com/omlhub/oml/contexts/lineage/internal/domain"
	"github.com/omlhub/oml/contexts/lineage/internal/httpapi"
	"github.com/omlhub/oml/contexts/lineage/internal/mcptools"
	"github.com/omlhub/oml/contexts/lineage/internal/postgres"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/transport"
)

// The ports other contexts fill, re-exported for cmd/oml-server's wiring.
type (
	// Access is the access context as lineage needs it.
	Access = app.Access
	// Workarea is a workarea with the caller's scopes there.
	Workarea = app.Workarea
	// Subtrees are where the caller holds a scope.
	Subtrees = app.Subtrees
	// QueueCount is what waits for one reviewer in one workarea.
	QueueCount = app.QueueCount
	// Claims is the admission context as lineage needs it.
	Claims = app.Claims
	// ClaimRef is a claim as the graph shows it.
	ClaimRef = app.ClaimRef
	// Visibility is how the caller may see a claim.
	Visibility = app.Visibility
	// Edge is a proposed connection.
	Edge = domain.Edge
	// Reads is the read log as lineage needs it.
	Reads = app.Reads
	// GraphRead is one graph read as logged.
	GraphRead = app.GraphRead
)

// The visibilities.
const (
	Absent   = app.Absent
	BodyLess = app.BodyLess
	Readable = app.Readable
)

// Deps are what the context needs from the process.
type Deps struct {
	DB      *pg.DB
	Journal *journal.Journal
	Access  Access
	Claims  Claims
	Reads   Reads
	Now     func() time.Time
}

// Module is the lineage context.
type Module struct {
	svc  *app.Service
	http *httpapi.Handlers
}

// New assembles the context.
func New(d Deps) *Module {
	svc := app.New(app.Deps{Repo: postgres.New(d.DB), Access: d.Access, Claims: d.Claims, Reads: d.Reads, Journal: d.Journal, Tx: d.DB, Now: d.Now})
	return &Module{svc: svc, http: httpapi.New(svc)}
}

// Routes registers the HTTP routes (under /v1).
func (m *Module) Routes(r chi.Router) { m.http.Routes(r) }

// Tools registers the MCP tools.
func (m *Module) Tools(t *transport.Tools) { mcptools.Register(t, m.svc) }

// Declare records that artifact derives from targets, in the caller's unit
// of work.
func (m *Module) Declare(ctx context.Context, tenant, artifact string, targets []string, at time.Time) error {
	return m.svc.Declare(ctx, tenant, artifact, targets, at)
}

// Closures is Closure for many artifacts in one query while their closures
// together stay within limit; refused holds review.closure_bound for those
// above it.
func (m *Module) Closures(ctx context.Context, tenant string, artifacts []string, limit int) (map[string][]string, map[string]error, error) {
	return m.svc.Closures(ctx, tenant, artifacts, limit)
}

// Parents lists what artifact derives from directly.
func (m *Module) Parents(ctx context.Context, tenant, artifact string) ([]string, error) {
	return m.svc.Parents(ctx, tenant, artifact)
}

// ServedEdge reads a served edge for its reviewer (see Service.ServedEdge).
func (m *Module) ServedEdge(ctx context.Context, tenant, edgeID string, within Subtrees) (Edge, error) {
	return m.svc.ServedEdge(ctx, tenant, edgeID, within)
}

// NextForReview leases the oldest pending edge a reviewer may ratify.
func (m *Module) NextForReview(ctx context.Context, tenant, principal string, within Subtrees, skip []string, now, leaseUntil time.Time) (Edge, bool, error) {
	return m.svc.NextForReview(ctx, tenant, principal, within, skip, now, leaseUntil)
}

// QueueCounts counts the pending edges the reviewer could ratify, per the
// workarea of their from endpoint.
func (m *Module) QueueCounts(ctx context.Context, tenant, principal string, within Subtrees, now time.Time) ([]QueueCount, error) {
	return m.svc.QueueCounts(ctx, tenant, principal, within, now)
}

// ReleaseEdge gives a pending edge back to the queue if lease is still
// its lease, in the caller's unit of work.
func (m *Module) ReleaseEdge(ctx context.Context, tenant, edgeID string, lease time.Time) error {
	return m.svc.ReleaseEdge(ctx, tenant, edgeID, lease)
}

// Decide ratifies or rejects a leased edge in the caller's unit of work.
func (m *Module) Decide(ctx context.Context, tenant, edgeID string, approve bool, byKey string, within Subtrees) (Edge, error) {
	return m.svc.Decide(ctx, tenant, edgeID, approve, byKey, within)
}

// WorkareaEdges lists a workarea's live outgoing edges.
func (m *Module) WorkareaEdges(ctx context.Context, tenant, workarea string) ([]Edge, error) {
	return m.svc.WorkareaEdges(ctx, tenant, workarea)
}
