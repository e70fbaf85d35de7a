package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// Info is one workarea as a key may see it.
type Info struct {
	Workarea domain.Workarea
	// Children and Edges are those the key can read; the others are
	// absent, not marked.
	Children []domain.Workarea
	Edges    []WorkareaEdge
	Verbs    []string
	Epoch    int64
}

// WorkareaInfo returns the node ref (id or path) as the caller sees it.
func (s *Service) WorkareaInfo(ctx context.Context, ref string) (Info, error) {
	v, err := s.viewOf(ctx)
	if err != nil {
		return Info{}, err
	}
	if v.role == domain.RoleOperator {
		return Info{}, errs.New(errs.VerbCeiling, ruleOperator, "operator keys have no content view")
	}
	w, _, err := s.visible(ctx, v, ref, domain.ScopeReader)
	if err != nil {
		return Info{}, err
	}
	return s.info(ctx, v, w)
}

func (s *Service) info(ctx context.Context, v view, w domain.Workarea) (Info, error) {
	children, err := s.repo.WorkareaChildren(ctx, v.caller.TenantID, w.ID)
	if err != nil {
		return Info{}, fmt.Errorf("load children: %w", err)
	}
	readable := children[:0]
	for _, c := range children {
		if v.at(c).Has(domain.ScopeReader) {
			readable = append(readable, c)
		}
	}
	var edges []WorkareaEdge
	if s.edges != nil {
		all, err := s.edges.From(ctx, v.caller.TenantID, w.ID)
		if err != nil {
			return Info{}, fmt.Errorf("load edges: %w", err)
		}
		for _, e := range all {
			if v.atPath(e.ToIDPath).Has(domain.ScopeReader) {
				edges = append(edges, e)
			}
		}
	}
	return Info{
		Workarea: w,
		Children: readable,
		Edges:    edges,
		Verbs:    domain.Verbs(v.at(w), w.Status, w.IsRoot()),
		Epoch:    v.access.Epoch,
	}, nil
}

// WorkareaID resolves ref (id or path) to the id of a workarea the caller
// holds some access on; idempotency records are scoped by it, so an id and
// a path naming the same node share one scope.
func (s *Service) WorkareaID(ctx context.Context, ref string) (string, error) {
	v, err := s.viewOf(ctx)
	if err != nil {
		return "", err
	}
	w, err := s.resolve(ctx, v.caller.TenantID, ref)
	if err != nil {
		return "", err
	}
	if v.at(w) == 0 {
		return "", notFound()
	}
	return w.ID, nil
}

// CreateWorkarea is the admin verb that adds a child node.
type CreateWorkarea struct {
	Parent string
	Name   string
	Status string
	Crew   *domain.Crew
}

// CreateWorkarea adds a child under an existing node.
func (s *Service) CreateWorkarea(ctx context.Context, cmd CreateWorkarea) (Info, error) {
	var status domain.Status
	if cmd.Status != "" {
		var ok bool
		if status, ok = domain.ParseStatus(cmd.Status); !ok {
			return Info{}, errs.Invalid("status %q: want development, committed or validated", cmd.Status)
		}
	}
	var out Info
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		v, err := s.viewOf(ctx)
		if err != nil {
			return err
		}
		parent, _, err := s.visible(ctx, v, cmd.Parent, domain.ScopeAdmin)
		if err != nil {
			return err
		}
		w, err := domain.NewChild(parent, cmd.Name, status, cmd.Crew, s.now())
		if err != nil {
			return err
		}
		if err := s.repo.WorkareaCreate(ctx, v.caller.TenantID, w); err != nil {
			if errors.Is(err, ErrConflict) {
				return errs.New(errs.WorkareaConflict, "workarea names are unique among siblings",
					"workarea %s already has a child named %q", parent.ID, w.Name)
			}
			return fmt.Errorf("create workarea: %w", err)
		}
		err = s.record(ctx, v.caller.TenantID, journal.Event{
			Type: "workarea.create", Actor: v.caller.KeyID, Workarea: w.ID,
			Subject: map[string]any{"workarea_id": w.ID},
			Payload: map[string]any{"parent": parent.ID, "name": w.Name, "path": w.Path, "status": w.Status, "crew": crewPayload(w.Crew)},
		})
		if err != nil {
			return err
		}
		out, err = s.info(ctx, v, w)
		return err
	})
	return out, err
}

// UpdateWorkarea is the admin PATCH: status up the ladder and/or crew.
type UpdateWorkarea struct {
	Ref     string
	Status  string // "" keeps it
	SetCrew bool   // true replaces the crew record with Crew (nil clears it)
	Crew    *domain.Crew
}

// UpdateWorkarea applies an admin PATCH.
func (s *Service) UpdateWorkarea(ctx context.Context, cmd UpdateWorkarea) (Info, error) {
	var status domain.Status
	if cmd.Status != "" {
		var ok bool
		if status, ok = domain.ParseStatus(cmd.Status); !ok {
			return Info{}, errs.Invalid("status %q: want development, committed or validated", cmd.Status)
		}
	}
	if status == "" && !cmd.SetCrew {
		return Info{}, errs.Invalid("nothing to change: send status and/or crew")
	}
	var out Info
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		v, err := s.viewOf(ctx)
		if err != nil {
			return err
		}
		target, _, err := s.visible(ctx, v, cmd.Ref, domain.ScopeAdmin)
		if err != nil {
			return err
		}
		if target.IsRoot() && status != "" {
			return errs.New(errs.Validation, "universe is the tenant's root; its status is fixed", "universe's status cannot change")
		}
		before := target
		w, err := s.repo.WorkareaUpdate(ctx, v.caller.TenantID, target.ID, func(w *domain.Workarea) error {
			before = *w
			if status != "" {
				if err := w.SetStatus(status, s.now()); err != nil {
					return err
				}
			}
			if cmd.SetCrew {
				return w.SetCrew(cmd.Crew, s.now())
			}
			return nil
		})
		if err != nil {
			return err
		}
		payload := map[string]any{}
		if w.Status != before.Status {
			payload["status"] = map[string]any{"from": before.Status, "to": w.Status}
		}
		if cmd.SetCrew {
			payload["crew"] = crewPayload(w.Crew)
		}
		err = s.record(ctx, v.caller.TenantID, journal.Event{
			Type: "workarea.update", Actor: v.caller.KeyID, Workarea: w.ID,
			Subject: map[string]any{"workarea_id": w.ID}, Payload: payload,
		})
		if err != nil {
			return err
		}
		out, err = s.info(ctx, v, w)
		return err
	})
	return out, err
}

// crewPayload is the crew record as journalled (nil when absent).
func crewPayload(c *domain.Crew) map[string]string {
	if c == nil {
		return nil
	}
	return map[string]string{"name": c.Name, "charter_uri": c.CharterURI, "external_manager": c.ExternalManager}
}

// The bounds of a workarea listing.
const (
	DefaultWorkareaPage = 100
	MaxWorkareaPage     = 500
)

// WorkareasPage is one page of the tree a key reads; NextCursor continues
// it ("" at the end).
type WorkareasPage struct {
	Workareas  []domain.Workarea
	NextCursor string
}

// ListWorkareas lists the workareas the caller reads, parents before
// children, a page at a time: every node inside a subtree it holds reader
// on and outside every subtree denied to it (D7).
func (s *Service) ListWorkareas(ctx context.Context, cursor string, limit int) (WorkareasPage, error) {
	switch {
	case limit == 0:
		limit = DefaultWorkareaPage
	case limit < 0 || limit > MaxWorkareaPage:
		return WorkareasPage{}, errs.New(errs.LimitCeiling, "a workarea listing is bounded: limit 1–500", "limit %d is outside 1–%d", limit, MaxWorkareaPage)
	}
	if cursor != "" && !ids.Has(ids.Workarea, cursor) {
		return WorkareasPage{}, errs.Invalid("cursor: not one this listing gave (want a next_cursor)")
	}
	c, err := caller(ctx)
	if err != nil {
		return WorkareasPage{}, err
	}
	// An operator sees the tree it administers (names and status, no
	// content); everyone else the tree it reads.
	want := domain.ScopeReader
	if c.Role == string(domain.RoleOperator) {
		want = domain.ScopeAdmin
	}
	allow, deny, err := s.Subtrees(ctx, want)
	if err != nil {
		return WorkareasPage{}, err
	}
	if len(allow) == 0 {
		return WorkareasPage{Workareas: []domain.Workarea{}}, nil
	}
	ws, err := s.repo.WorkareasReadable(ctx, c.TenantID, allow, deny, cursor, limit+1)
	if err != nil {
		return WorkareasPage{}, fmt.Errorf("list workareas: %w", err)
	}
	page := WorkareasPage{Workareas: ws}
	if len(ws) > limit {
		page.Workareas, page.NextCursor = ws[:limit], ws[limit-1].ID
	}
	if page.Workareas == nil {
		page.Workareas = []domain.Workarea{}
	}
	return page, nil
}

// AdminSubtree resolves a workarea the caller administers and lists the
// ids of its subtree (itself included) where the caller holds both admin
// and reader effective access now — a deny on either carves a subtree out
// — at most max; a larger subtree is refused rather than cut. Tenant says
// whether the caller also administers the tenant (admin on universe).
func (s *Service) AdminSubtree(ctx context.Context, ref string, max int) (w domain.Workarea, ids []string, tenant bool, err error) {
	v, err := s.viewOf(ctx)
	if err != nil {
		return domain.Workarea{}, nil, false, err
	}
	if w, _, err = s.visible(ctx, v, ref, domain.ScopeAdmin); err != nil {
		return domain.Workarea{}, nil, false, err
	}
	adminAllow, adminDeny, err := s.Subtrees(ctx, domain.ScopeAdmin)
	if err != nil {
		return domain.Workarea{}, nil, false, err
	}
	readAllow, readDeny, err := s.Subtrees(ctx, domain.ScopeReader)
	if err != nil {
		return domain.Workarea{}, nil, false, err
	}
	deny := append(slices.Clone(adminDeny), readDeny...)
	ws, err := s.repo.WorkareasReadable(ctx, v.caller.TenantID, []string{w.IDPath}, deny, "", max+1)
	if err != nil {
		return domain.Workarea{}, nil, false, fmt.Errorf("list the subtree: %w", err)
	}
	if len(ws) > max {
		return domain.Workarea{}, nil, false, errs.New(errs.LimitCeiling, "an evidence export covers at most "+strconv.Itoa(max)+" workareas",
			"workarea %s has more than %d workareas under it; export a smaller subtree", w.ID, max)
	}
	admin, reader := scope.Subtrees{Allow: adminAllow}, scope.Subtrees{Allow: readAllow}
	for _, x := range ws {
		if admin.Contains(x.IDPath) && reader.Contains(x.IDPath) {
			ids = append(ids, x.ID)
		}
	}
	_, _, rootErr := s.adminAtRoot(ctx)
	return w, ids, rootErr == nil, nil
}

// AdminOn resolves a workarea the caller holds admin on (an admin or an
// operator through its grants).
func (s *Service) AdminOn(ctx context.Context, ref string) (domain.Workarea, error) {
	v, err := s.viewOf(ctx)
	if err != nil {
		return domain.Workarea{}, err
	}
	w, _, err := s.visible(ctx, v, ref, domain.ScopeAdmin)
	return w, err
}

// KeyInTenant is access.not_found unless id is a key of the caller's
// tenant.
func (s *Service) KeyInTenant(ctx context.Context, id string) error {
	c, err := caller(ctx)
	if err != nil {
		return err
	}
	_, err = s.keyIn(ctx, c.TenantID, id)
	return err
}
