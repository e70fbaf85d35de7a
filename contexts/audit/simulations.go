package audit

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/audit/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/transport"
)

// Simulation is a simulation (D10): a workarea's subtree, an audience of
// keys, and whether it ended.
type Simulation struct {
	ID        string     `json:"simulation_id"`
	Workarea  string     `json:"workarea"`
	Name      string     `json:"name"`
	Audience  []string   `json:"audience"`
	CreatedBy string     `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	EndedAt   *time.Time `json:"ended_at"`
}

// MaxAudience bounds a simulation's audience.
const MaxAudience = 1000

var simulationName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// CreateSimulation starts a simulation in a workarea the caller (admin or
// operator) administers, with an audience of the tenant's keys; journalled
// as simulation.create.
func (m *Module) CreateSimulation(ctx context.Context, workarea, name string, audience []string) (Simulation, error) {
	c, err := auth.Required(ctx)
	if err != nil {
		return Simulation{}, err
	}
	if !simulationName.MatchString(name) {
		return Simulation{}, errs.Invalid("name %q: want 1–63 of a-z 0-9 _ - (starting with a letter or digit)", name)
	}
	if len(audience) == 0 || len(audience) > MaxAudience {
		return Simulation{}, errs.Invalid("audience: 1 to %d key ids, got %d", MaxAudience, len(audience))
	}
	audience = slices.Compact(slices.Sorted(slices.Values(audience)))
	out := Simulation{ID: ids.New(ids.Simulation), Name: name, Audience: audience, CreatedBy: c.KeyID, CreatedAt: m.d.Now().UTC().Truncate(time.Microsecond)}
	err = m.d.Tx.InTx(ctx, func(ctx context.Context) error {
		w, idPath, err := m.d.Access.AdminOn(ctx, workarea)
		if err != nil {
			return err
		}
		out.Workarea = w
		for i, k := range audience {
			if err := m.d.Access.KeyInTenant(ctx, k); err != nil {
				if errs.Is(err, errs.NotFound) {
					return errs.New(errs.NotFound, "a simulation's audience is keys of its tenant", "audience[%d] names no key of this tenant", i)
				}
				return err
			}
		}
		n, err := m.q.SimulationInsert(ctx, m.d.Tx.Conn(ctx), dbsqlc.SimulationInsertParams{
			TenantID: c.TenantID, ID: out.ID, WorkareaID: w, WorkareaIDPath: idPath, Name: name, CreatedBy: c.KeyID, CreatedAt: out.CreatedAt,
		})
		if err != nil {
			return fmt.Errorf("insert simulation: %w", err)
		}
		if n == 0 {
			return errs.New(errs.SimulationExists, "a simulation's name is unique in its tenant", "a simulation named %q exists", name)
		}
		for _, k := range audience {
			if err := m.q.SimulationAudienceAdd(ctx, m.d.Tx.Conn(ctx), dbsqlc.SimulationAudienceAddParams{TenantID: c.TenantID, SimulationID: out.ID, KeyID: k}); err != nil {
				return fmt.Errorf("add to the audience: %w", err)
			}
		}
		_, err = m.d.Journal.Append(ctx, c.TenantID, journal.Event{
			Type: "simulation.create", Actor: c.KeyID, Workarea: w,
			Subject: map[string]any{"simulation_id": out.ID}, Payload: map[string]any{"name": name, "audience": audience},
		})
		return err
	})
	return out, err
}

// EndSimulation ends a simulation: no new writes carry it, and its rows
// stay fenced to its audience forever; journalled as simulation.end.
func (m *Module) EndSimulation(ctx context.Context, id string) (Simulation, error) {
	c, err := auth.Required(ctx)
	if err != nil {
		return Simulation{}, err
	}
	missing := errs.New(errs.NotFound, "simulations are tenant-scoped; unknown and foreign ones are indistinguishable", "no simulation with that id")
	if !ids.Has(ids.Simulation, id) {
		return Simulation{}, missing
	}
	var out Simulation
	err = m.d.Tx.InTx(ctx, func(ctx context.Context) error {
		row, err := m.q.SimulationGetForUpdate(ctx, m.d.Tx.Conn(ctx), dbsqlc.SimulationGetForUpdateParams{TenantID: c.TenantID, ID: id})
		if pg.IsNoRows(err) {
			return missing
		}
		if err != nil {
			return fmt.Errorf("load simulation: %w", err)
		}
		if _, _, err := m.d.Access.AdminOn(ctx, row.WorkareaID); err != nil {
			if errs.Is(err, errs.NotFound) {
				return missing
			}
			return err
		}
		if row.EndedAt != nil {
			return errs.New(errs.SimulationEnded, "a simulation ends once", "simulation %s ended at %s", id, row.EndedAt.UTC().Format(time.RFC3339))
		}
		now := m.d.Now().UTC().Truncate(time.Microsecond)
		if err := m.q.SimulationEnd(ctx, m.d.Tx.Conn(ctx), dbsqlc.SimulationEndParams{TenantID: c.TenantID, ID: id, EndedAt: &now, EndedBy: &c.KeyID}); err != nil {
			return fmt.Errorf("end simulation: %w", err)
		}
		out = Simulation{ID: id, Workarea: row.WorkareaID, Name: row.Name, CreatedBy: row.CreatedBy, CreatedAt: row.CreatedAt.UTC(), EndedAt: &now}
		_, err = m.d.Journal.Append(ctx, c.TenantID, journal.Event{
			Type: "simulation.end", Actor: c.KeyID, Workarea: row.WorkareaID, Subject: map[string]any{"simulation_id": id},
		})
		return err
	})
	return out, err
}

// ListSimulations lists the tenant's simulations (admin or operator on
// universe).
func (m *Module) ListSimulations(ctx context.Context) ([]Simulation, error) {
	c, err := auth.Required(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.d.Access.AdministersTenant(ctx); err != nil {
		return nil, err
	}
	rows, err := m.q.SimulationsList(ctx, m.d.Tx.Conn(ctx), c.TenantID)
	if err != nil {
		return nil, fmt.Errorf("list simulations: %w", err)
	}
	out := make([]Simulation, len(rows))
	for i, r := range rows {
		out[i] = Simulation{ID: r.ID, Workarea: r.WorkareaID, Name: r.Name, Audience: r.Audience, CreatedBy: r.CreatedBy,
			CreatedAt: r.CreatedAt.UTC(), EndedAt: r.EndedAt}
	}
	return out, nil
}

func (m *Module) simulationRoutes(r chi.Router) {
	r.Post("/simulations", transport.Handler(func(w http.ResponseWriter, r *http.Request) error {
		var req struct {
			Workarea string   `json:"workarea"`
			Name     string   `json:"name"`
			Audience []string `json:"audience"`
		}
		if err := transport.Decode(r, &req); err != nil {
			return err
		}
		if strings.TrimSpace(req.Workarea) == "" {
			return errs.Invalid("workarea is required (an id or a path)")
		}
		s, err := m.CreateSimulation(r.Context(), req.Workarea, req.Name, req.Audience)
		if err != nil {
			return err
		}
		transport.WriteJSON(w, http.StatusCreated, s)
		return nil
	}))
	r.Post("/simulations/{id}/end", transport.Handler(func(w http.ResponseWriter, r *http.Request) error {
		if err := transport.DecodeOptional(r, &struct{}{}); err != nil {
			return err
		}
		s, err := m.EndSimulation(r.Context(), chi.URLParam(r, "id"))
		if err != nil {
			return err
		}
		transport.WriteJSON(w, http.StatusOK, s)
		return nil
	}))
	r.Get("/simulations", transport.Handler(func(w http.ResponseWriter, r *http.Request) error {
		if _, err := transport.Query(r); err != nil {
			return err
		}
		list, err := m.ListSimulations(r.Context())
		if err != nil {
			return err
		}
		transport.WriteJSON(w, http.StatusOK, map[string]any{"simulations": list})
		return nil
	}))
}
