package app

import (
	"context"
	"fmt"

	"github.com/omlhub/oml/contexts/access/internal/domain"
)

// Effective resolves ref for the caller and returns the workarea with the
// caller's effective scopes there. A workarea the caller holds nothing on
// is access.not_found, like one that does not exist. Other contexts reach
// this through their own ports.
func (s *Service) Effective(ctx context.Context, ref string) (domain.Workarea, domain.Scope, error) {
	v, w, err := s.readViewAt(ctx, ref)
	if err != nil {
		return domain.Workarea{}, 0, err
	}
	have := v.at(w)
	if have == 0 {
		return domain.Workarea{}, 0, notFound()
	}
	return w, have, nil
}

// EffectiveByIDs is Effective for many workarea ids of the caller's
// tenant, in one read: the workareas the caller holds something on, with
// its scopes there. Unknown ids and ids the caller holds nothing on are
// left out (either is access.not_found for one id).
func (s *Service) EffectiveByIDs(ctx context.Context, ids []string) (map[string]domain.Workarea, map[string]domain.Scope, error) {
	v, err := s.readView(ctx)
	if err != nil {
		return nil, nil, err
	}
	ws, err := s.repo.WorkareasGet(ctx, v.caller.TenantID, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("load workareas: %w", err)
	}
	out, scopes := make(map[string]domain.Workarea, len(ws)), make(map[string]domain.Scope, len(ws))
	for _, w := range ws {
		if have := v.at(w); have != 0 {
			out[w.ID], scopes[w.ID] = w, have
		}
	}
	return out, scopes, nil
}

// Subtrees returns where the caller holds scope: the id paths of its allow
// grants carrying it, minus those of its deny grants (a node is inside if
// it is under an allow path and under no deny path). A role that cannot
// hold the scope, or a revoked key, gets nothing.
func (s *Service) Subtrees(ctx context.Context, scope domain.Scope) (allow, deny []string, err error) {
	v, err := s.readView(ctx)
	if err != nil {
		return nil, nil, err
	}
	if v.access.Revoked || !v.role.Ceiling().Has(scope) {
		return nil, nil, nil
	}
	for _, g := range v.access.Grants {
		if !g.Scope.Has(scope) {
			continue
		}
		if g.Effect == domain.Deny {
			deny = append(deny, g.IDPath)
		} else {
			allow = append(allow, g.IDPath)
		}
	}
	return allow, deny, nil
}

// Paths maps ids of the caller's tenant's workareas to their paths, for
// contexts that show paths of results they already filtered by access.
// An id that is not the tenant's workarea is left out. Paths never change,
// so the ones read are remembered (per tenant) and only the others read.
func (s *Service) Paths(ctx context.Context, ids []string) (map[string]string, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ids))
	var missing []string
	asked := make(map[string]bool, len(ids))
	for _, id := range ids {
		if asked[id] {
			continue
		}
		asked[id] = true
		if p, ok := s.paths.Get(c.TenantID + "\x00" + id); ok {
			out[id] = p
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	read, err := s.repo.WorkareaPaths(ctx, c.TenantID, missing)
	if err != nil {
		return nil, err
	}
	for id, p := range read {
		s.paths.Put(c.TenantID+"\x00"+id, p)
		out[id] = p
	}
	return out, nil
}

// KeyAt is another key of the caller's tenant as seen at one workarea: its
// principal, role and effective scopes there.
type KeyAt struct {
	Key    Key
	Scopes domain.Scope
}

// KeyAt resolves keyID in the caller's tenant and its effective access at
// the workarea with workareaID (which the caller has already resolved). An
// unknown or foreign key is access.not_found; a revoked one holds nothing.
// Other contexts reach this through their own ports (a session reassigned
// to another agent).
func (s *Service) KeyAt(ctx context.Context, keyID, workareaID string) (KeyAt, error) {
	c, err := caller(ctx)
	if err != nil {
		return KeyAt{}, err
	}
	k, err := s.keyIn(ctx, c.TenantID, keyID)
	if err != nil {
		return KeyAt{}, err
	}
	w, err := s.resolve(ctx, c.TenantID, workareaID)
	if err != nil {
		return KeyAt{}, err
	}
	a, err := s.repo.AccessOf(ctx, c.TenantID, k.ID)
	if err != nil {
		return KeyAt{}, fmt.Errorf("load access: %w", err)
	}
	return KeyAt{Key: k, Scopes: domain.Effective(k.Role, a.Revoked || k.RevokedAt != nil, a.Grants, w.IDPath)}, nil
}
