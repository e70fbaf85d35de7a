// Package lineage is the lineage bounded context: declared derives_from
// between artifacts and the closures review independence (R2) is checked
// against. Claim and workarea edges and the scoped graph read build on it.
package lineage

import (
	"context"
	"time"

	"github.com/omlhub/oml/contexts/lineage/internal/postgres"
	"github.com/omlhub/oml/platform/pg"
)

// Deps are what the context needs from the process.
type Deps struct {
	DB *pg.DB
}

// Module is the lineage context.
type Module struct {
	repo *postgres.Repository
}

// New assembles the context.
func New(d Deps) *Module { return &Module{repo: postgres.New(d.DB)} }

// Declare records that artifact derives from targets, in the caller's unit
// of work.
func (m *Module) Declare(ctx context.Context, tenant, artifact string, targets []string, at time.Time) error {
	return m.repo.Declare(ctx, tenant, artifact, targets, at)
}

// Closure returns every artifact the given one derives from, transitively,
// at most limit of them.
func (m *Module) Closure(ctx context.Context, tenant, artifact string, limit int) ([]string, error) {
	return m.repo.Closure(ctx, tenant, artifact, limit)
}

// Parents lists what artifact derives from directly.
func (m *Module) Parents(ctx context.Context, tenant, artifact string) ([]string, error) {
	return m.repo.Parents(ctx, tenant, artifact)
}
