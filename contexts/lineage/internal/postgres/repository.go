// Package postgres is the lineage context's storage: declared derivations
// and closure walks over the lineage schema.
package postgres

import (
	"context"
	"time"

	"github.com/omlhub/oml/contexts/lineage/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/pg"
)

// Repository stores lineage.
type Repository struct {
	db *pg.DB
	q  *dbsqlc.Queries
}

// New returns a repository on db.
func New(db *pg.DB) *Repository { return &Repository{db: db, q: dbsqlc.New()} }

// Declare records artifact → targets derivations.
func (r *Repository) Declare(ctx context.Context, tenant, artifact string, targets []string, at time.Time) error {
	return r.q.DerivationsInsert(ctx, r.db.Conn(ctx), dbsqlc.DerivationsInsertParams{
		TenantID: tenant, ArtifactID: artifact, Targets: targets, DeclaredAt: at,
	})
}

// Closure walks derivations transitively from artifact.
func (r *Repository) Closure(ctx context.Context, tenant, artifact string, limit int) ([]string, error) {
	return r.q.DerivationsClosure(ctx, r.db.Conn(ctx), dbsqlc.DerivationsClosureParams{
		TenantID: tenant, ArtifactID: artifact, MaxRows: int32(limit),
	})
}

// Parents lists what artifact derives from directly.
func (r *Repository) Parents(ctx context.Context, tenant, artifact string) ([]string, error) {
	return r.q.DerivationsOf(ctx, r.db.Conn(ctx), dbsqlc.DerivationsOfParams{TenantID: tenant, ArtifactID: artifact})
}
