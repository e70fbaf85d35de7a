package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/omlhub/oml/contexts/audit/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/scope"
)

// Audiences answers the two questions every other context asks about
// simulations (D10): which simulations' rows a caller may read (its
// fence), and whether it may write into one. The other contexts reach it
// through their Access ports; it needs only the database, so it exists
// before the contexts that read through it.
type Audiences struct {
	db *pg.DB
	q  *dbsqlc.Queries
}

// NewAudiences returns the audiences over db.
func NewAudiences(db *pg.DB) Audiences { return Audiences{db: db, q: dbsqlc.New()} }

type fenceKey struct{}

// Fence returns the simulations whose audience holds the caller's key,
// once per request (and per unit of work).
func (a Audiences) Fence(ctx context.Context) (scope.Fence, error) {
	c, err := auth.Required(ctx)
	if err != nil {
		return nil, err
	}
	return auth.Memo(ctx, fenceKey{}, func() (scope.Fence, error) {
		sims, err := a.q.SimulationsOfKey(ctx, a.db.Conn(ctx), dbsqlc.SimulationsOfKeyParams{TenantID: c.TenantID, KeyID: c.KeyID})
		if err != nil {
			return nil, fmt.Errorf("load the caller's simulations: %w", err)
		}
		return scope.Fence(sims), nil
	})
}

// Writable is a simulation as a write into it needs it: its workarea (the
// write's target must lie in that workarea's subtree).
type Writable struct {
	WorkareaID, WorkareaIDPath string
}

// Writable returns simulation id for a write by the caller, in the
// caller's unit of work: a simulation whose audience does not hold the
// key is access.not_found (unknown, foreign and fenced are
// indistinguishable), an ended one simulation.ended. The row stays share-
// locked until the unit of work ends, so an end waits for the write.
func (a Audiences) Writable(ctx context.Context, id string) (Writable, error) {
	c, err := auth.Required(ctx)
	if err != nil {
		return Writable{}, err
	}
	missing := errs.New(errs.NotFound, "simulations are served only to their audience (D10)", "no simulation with that id for this key")
	if !ids.Has(ids.Simulation, id) {
		return Writable{}, missing
	}
	row, err := a.q.SimulationForKey(ctx, a.db.Conn(ctx), dbsqlc.SimulationForKeyParams{TenantID: c.TenantID, ID: id, KeyID: c.KeyID})
	if pg.IsNoRows(err) {
		return Writable{}, missing
	}
	if err != nil {
		return Writable{}, fmt.Errorf("load simulation: %w", err)
	}
	if row.EndedAt != nil {
		return Writable{}, errs.New(errs.SimulationEnded, "an ended simulation takes no new writes; its rows stay fenced (D10)",
			"simulation %s ended at %s", id, row.EndedAt.UTC().Format(time.RFC3339))
	}
	return Writable{WorkareaID: row.WorkareaID, WorkareaIDPath: row.WorkareaIDPath}, nil
}
