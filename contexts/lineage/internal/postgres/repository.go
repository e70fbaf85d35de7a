// Package postgres is the lineage context's storage: declared derivations,
// closure walks and edges over the lineage schema.
package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/omlhub/oml/contexts/lineage/internal/app"
	"github.com/omlhub/oml/contexts/lineage/internal/domain"
	"github.com/omlhub/oml/contexts/lineage/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/pg"
)

// Repository implements app.Repository.
type Repository struct {
	db *pg.DB
	q  *dbsqlc.Queries
}

var _ app.Repository = (*Repository)(nil)

// New returns a repository on db.
func New(db *pg.DB) *Repository { return &Repository{db: db, q: dbsqlc.New()} }

func (r *Repository) conn(ctx context.Context) dbsqlc.DBTX { return r.db.Conn(ctx) }

func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case pg.IsNoRows(err):
		return app.ErrNotFound
	case pg.IsUniqueViolation(err, ""):
		return fmt.Errorf("%w: %v", app.ErrConflict, err)
	}
	return err
}

// Declare records artifact → targets derivations.
func (r *Repository) Declare(ctx context.Context, tenant, artifact string, targets []string, at time.Time) error {
	return translate(r.q.DerivationsInsert(ctx, r.conn(ctx), dbsqlc.DerivationsInsertParams{
		TenantID: tenant, ArtifactID: artifact, Targets: targets, DeclaredAt: at,
	}))
}

// Closure walks derivations and claim edges transitively from artifact.
func (r *Repository) Closure(ctx context.Context, tenant, artifact string, limit int) ([]string, error) {
	ids, err := r.q.DerivationsClosure(ctx, r.conn(ctx), dbsqlc.DerivationsClosureParams{
		TenantID: tenant, ArtifactID: artifact, MaxRows: int32(limit),
	})
	return ids, translate(err)
}

// Closures is Closure for many roots: each root's members, at most limit
// (root, member) pairs in all.
func (r *Repository) Closures(ctx context.Context, tenant string, roots []string, limit int) (map[string][]string, int, error) {
	rows, err := r.q.DerivationsClosures(ctx, r.conn(ctx), dbsqlc.DerivationsClosuresParams{
		TenantID: tenant, Roots: roots, MaxRows: int32(limit),
	})
	if err != nil {
		return nil, 0, translate(err)
	}
	out := make(map[string][]string, len(roots))
	for _, row := range rows {
		out[row.Root] = append(out[row.Root], row.ID)
	}
	return out, len(rows), nil
}

// Parents lists what artifact derives from directly.
func (r *Repository) Parents(ctx context.Context, tenant, artifact string) ([]string, error) {
	ids, err := r.q.DerivationsOf(ctx, r.conn(ctx), dbsqlc.DerivationsOfParams{TenantID: tenant, ArtifactID: artifact})
	return ids, translate(err)
}

// DerivationsTouching lists derivations with an end among ids.
func (r *Repository) DerivationsTouching(ctx context.Context, tenant string, ids []string) ([]app.Derivation, error) {
	rows, err := r.q.DerivationsTouching(ctx, r.conn(ctx), dbsqlc.DerivationsTouchingParams{TenantID: tenant, Ids: ids})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]app.Derivation, len(rows))
	for i, row := range rows {
		out[i] = app.Derivation{From: row.ArtifactID, To: row.TargetID}
	}
	return out, nil
}

// EdgeInsert stores a pending edge.
func (r *Repository) EdgeInsert(ctx context.Context, e domain.Edge) error {
	var note *string
	if e.Note != "" {
		note = &e.Note
	}
	return translate(r.q.EdgeInsert(ctx, r.conn(ctx), dbsqlc.EdgeInsertParams{
		TenantID: e.TenantID, ID: e.ID, Kind: string(e.Kind), Label: e.Label, FromID: e.From, ToID: e.To,
		FromIDPath: e.FromIDPath, ToIDPath: e.ToIDPath, Note: note, ProposerKeyID: e.ProposerKeyID,
		ProposerPrincipal: e.ProposerPrincipal, ProposedAt: e.ProposedAt,
	}))
}

func edgeFromRow(row dbsqlc.LineageEdge) domain.Edge {
	e := domain.Edge{
		ID: row.ID, TenantID: row.TenantID, Kind: domain.Kind(row.Kind), Label: row.Label, From: row.FromID, To: row.ToID,
		FromIDPath: row.FromIDPath, ToIDPath: row.ToIDPath, State: domain.State(row.State),
		ProposerKeyID: row.ProposerKeyID, ProposerPrincipal: row.ProposerPrincipal, ProposedAt: row.ProposedAt,
		DecidedAt: row.DecidedAt, LeasedUntil: row.LeasedUntil,
	}
	if row.Note != nil {
		e.Note = *row.Note
	}
	return e
}

func edgesFromRows(rows []dbsqlc.LineageEdge) []domain.Edge {
	out := make([]domain.Edge, len(rows))
	for i, row := range rows {
		out[i] = edgeFromRow(row)
	}
	return out
}

// EdgeGetForUpdate loads and locks an edge.
func (r *Repository) EdgeGetForUpdate(ctx context.Context, tenant, id string) (domain.Edge, error) {
	row, err := r.q.EdgeGetForUpdate(ctx, r.conn(ctx), dbsqlc.EdgeGetForUpdateParams{TenantID: tenant, ID: id})
	if err != nil {
		return domain.Edge{}, translate(err)
	}
	return edgeFromRow(row), nil
}

// EdgeNextForReview locks and leases the oldest pending edge the reviewer
// may ratify.
// EdgeLeaseClear implements app.Repository.
func (r *Repository) EdgeLeaseClear(ctx context.Context, tenant, id string, lease time.Time) error {
	return translate(r.q.EdgeLeaseClear(ctx, r.conn(ctx), dbsqlc.EdgeLeaseClearParams{TenantID: tenant, ID: id, Lease: &lease}))
}

// EdgesQueueCounts implements app.Repository.
func (r *Repository) EdgesQueueCounts(ctx context.Context, tenant, principal string, within app.Subtrees, now time.Time) ([]app.QueueCount, error) {
	rows, err := r.q.EdgesQueueCounts(ctx, r.conn(ctx), dbsqlc.EdgesQueueCountsParams{
		TenantID: tenant, Principal: principal, Now: &now, Allow: orEmpty(within.Allow), Deny: orEmpty(within.Deny),
	})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]app.QueueCount, len(rows))
	for i, row := range rows {
		out[i] = app.QueueCount{WorkareaID: ids.WithSuffix(ids.Workarea, row.FromLabel), Waiting: int(row.Waiting), Leased: int(row.Leased), Oldest: row.Oldest}
	}
	return out, nil
}

func (r *Repository) EdgeNextForReview(ctx context.Context, tenant, principal string, within app.Subtrees, skip []string, now, leaseUntil time.Time) (domain.Edge, error) {
	rows, err := r.q.EdgesQueue(ctx, r.conn(ctx), dbsqlc.EdgesQueueParams{
		TenantID: tenant, Principal: principal, Now: &now, Allow: orEmpty(within.Allow), Deny: orEmpty(within.Deny), Skip: orEmpty(skip),
	})
	if err != nil {
		return domain.Edge{}, translate(err)
	}
	if len(rows) == 0 {
		return domain.Edge{}, app.ErrNotFound
	}
	e := edgeFromRow(rows[0])
	if err := r.q.EdgeLease(ctx, r.conn(ctx), dbsqlc.EdgeLeaseParams{TenantID: tenant, ID: e.ID, LeasedUntil: &leaseUntil}); err != nil {
		return domain.Edge{}, translate(err)
	}
	e.LeasedUntil = &leaseUntil
	return e, nil
}

// EdgeDecide stores a decision.
func (r *Repository) EdgeDecide(ctx context.Context, e domain.Edge, by string) error {
	return translate(r.q.EdgeDecide(ctx, r.conn(ctx), dbsqlc.EdgeDecideParams{
		TenantID: e.TenantID, ID: e.ID, State: string(e.State), DecidedAt: e.DecidedAt, DecidedBy: &by,
	}))
}

// ClaimEdgesTouching lists live claim edges with an endpoint among ids.
func (r *Repository) ClaimEdgesTouching(ctx context.Context, tenant string, ids []string) ([]domain.Edge, error) {
	rows, err := r.q.EdgesTouching(ctx, r.conn(ctx), dbsqlc.EdgesTouchingParams{TenantID: tenant, Ids: ids})
	if err != nil {
		return nil, translate(err)
	}
	return edgesFromRows(rows), nil
}

// WorkareaEdgesFrom lists a workarea's live outgoing edges.
func (r *Repository) WorkareaEdgesFrom(ctx context.Context, tenant, workarea string) ([]domain.Edge, error) {
	rows, err := r.q.WorkareaEdgesFrom(ctx, r.conn(ctx), dbsqlc.WorkareaEdgesFromParams{TenantID: tenant, FromID: workarea})
	if err != nil {
		return nil, translate(err)
	}
	return edgesFromRows(rows), nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
