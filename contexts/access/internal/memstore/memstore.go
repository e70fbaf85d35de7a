// Package memstore is an in-memory app.Repository for the access context's
// application tests. It passes the same contract suite as the Postgres
// adapter (repotest).
package memstore

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/scope"
)

type keyRow struct {
	tenant       string
	key          app.Key
	selector     string
	verifier     []byte
	revokedEpoch *int64
}

type grantRow struct {
	tenant                     string
	grant                      app.Grant
	createdEpoch, removedEpoch *int64
}

// Store implements app.Repository.
type Store struct {
	mu         sync.Mutex
	tenants    map[string]string // id → name
	epochs     map[string]int64
	principals map[string]app.Principal // tenant+"/"+name
	keys       map[string]*keyRow       // key id
	workareas  map[string]domain.Workarea
	wTenant    map[string]string // workarea id → tenant
	grants     map[string]*grantRow
	bans       map[string]*banRow
	web        map[string]*webRow // selector
	quotas     map[string]app.Quotas
}

type webRow struct {
	cred app.WebCredential
}

type banRow struct {
	tenant string
	ban    app.Ban
}

var _ app.Repository = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{
		tenants: map[string]string{}, epochs: map[string]int64{}, principals: map[string]app.Principal{},
		keys: map[string]*keyRow{}, workareas: map[string]domain.Workarea{}, wTenant: map[string]string{},
		grants: map[string]*grantRow{}, bans: map[string]*banRow{}, web: map[string]*webRow{}, quotas: map[string]app.Quotas{},
	}
}

// TenantCreate inserts a tenant.
func (s *Store) TenantCreate(_ context.Context, id, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.tenants {
		if n == name {
			return app.ErrConflict
		}
	}
	s.tenants[id] = name
	return nil
}

// EpochGet reads a tenant's epoch.
func (s *Store) EpochGet(_ context.Context, tenant string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tenants[tenant]; !ok {
		return 0, app.ErrNotFound
	}
	return s.epochs[tenant], nil
}

// EpochBump advances a tenant's epoch.
func (s *Store) EpochBump(_ context.Context, tenant string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tenants[tenant]; !ok {
		return 0, app.ErrNotFound
	}
	s.epochs[tenant]++
	return s.epochs[tenant], nil
}

// PrincipalEnsure returns or creates a principal.
func (s *Store) PrincipalEnsure(_ context.Context, tenant, name string) (app.Principal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tenant + "/" + name
	if p, ok := s.principals[k]; ok {
		return p, nil
	}
	p := app.Principal{ID: ids.New(ids.Principal), Name: name}
	s.principals[k] = p
	return p, nil
}

// KeyCreate stores a key.
func (s *Store) KeyCreate(_ context.Context, tenant string, k app.Key, selector, verifier []byte, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.keys {
		if r.selector == string(selector) {
			return app.ErrConflict
		}
	}
	if _, ok := s.keys[k.ID]; ok {
		return app.ErrConflict
	}
	s.keys[k.ID] = &keyRow{tenant: tenant, key: k, selector: string(selector), verifier: slices.Clone(verifier)}
	return nil
}

// KeyBySelector finds a key by selector.
func (s *Store) KeyBySelector(_ context.Context, selector []byte) (app.KeyAuth, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.keys {
		if r.selector == string(selector) {
			return app.KeyAuth{TenantID: r.tenant, Key: r.key, Verifier: r.verifier}, nil
		}
	}
	return app.KeyAuth{}, app.ErrNotFound
}

// KeyGet loads a tenant's key.
func (s *Store) KeyGet(_ context.Context, tenant, id string) (app.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.keys[id]
	if !ok || r.tenant != tenant {
		return app.Key{}, app.ErrNotFound
	}
	return r.key, nil
}

// KeyList lists a tenant's keys by id.
func (s *Store) KeyList(_ context.Context, tenant string) ([]app.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []app.Key
	for _, r := range s.keys {
		if r.tenant == tenant {
			out = append(out, r.key)
		}
	}
	slices.SortFunc(out, func(a, b app.Key) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// KeyRevoke revokes a live key.
func (s *Store) KeyRevoke(_ context.Context, tenant, id string, at time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.keys[id]
	if !ok || r.tenant != tenant || r.key.RevokedAt != nil {
		return false, nil
	}
	r.key.RevokedAt = &at
	return true, nil
}

// WorkareaCreate inserts a node.
func (s *Store) WorkareaCreate(_ context.Context, tenant string, w domain.Workarea) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tenants[tenant]; !ok {
		return app.ErrNotFound
	}
	for id, o := range s.workareas {
		if s.wTenant[id] == tenant && (o.Path == w.Path || (w.ParentID == "" && o.ParentID == "")) {
			return app.ErrConflict
		}
	}
	s.workareas[w.ID] = w
	s.wTenant[w.ID] = tenant
	return nil
}

// WorkareaGet loads a node.
func (s *Store) WorkareaGet(_ context.Context, tenant, id string) (domain.Workarea, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.workareas[id]
	if !ok || s.wTenant[id] != tenant {
		return domain.Workarea{}, app.ErrNotFound
	}
	return w, nil
}

// WorkareasGet loads the tenant's nodes among ids.
func (s *Store) WorkareasGet(_ context.Context, tenant string, ids []string) ([]domain.Workarea, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Workarea
	for _, id := range ids {
		if w, ok := s.workareas[id]; ok && s.wTenant[id] == tenant {
			out = append(out, w)
		}
	}
	return out, nil
}

// WorkareaByPath loads a node by path.
func (s *Store) WorkareaByPath(_ context.Context, tenant, path string) (domain.Workarea, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, w := range s.workareas {
		if s.wTenant[id] == tenant && w.Path == path {
			return w, nil
		}
	}
	return domain.Workarea{}, app.ErrNotFound
}

// WorkareaChildren lists children by name.
func (s *Store) WorkareaChildren(_ context.Context, tenant, id string) ([]domain.Workarea, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Workarea
	for cid, w := range s.workareas {
		if s.wTenant[cid] == tenant && w.ParentID == id {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b domain.Workarea) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// WorkareaUpdate applies fn to a node.
func (s *Store) WorkareaUpdate(_ context.Context, tenant, id string, fn func(*domain.Workarea) error) (domain.Workarea, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.workareas[id]
	if !ok || s.wTenant[id] != tenant {
		return domain.Workarea{}, app.ErrNotFound
	}
	if err := fn(&w); err != nil {
		return domain.Workarea{}, err
	}
	s.workareas[id] = w
	return w, nil
}

// GrantCreate inserts a grant unless an identical live one exists.
func (s *Store) GrantCreate(_ context.Context, tenant string, g app.Grant, _ string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.grants {
		o := r.grant
		if r.tenant == tenant && o.RemovedAt == nil && o.KeyID == g.KeyID && o.WorkareaID == g.WorkareaID && o.Scope == g.Scope && o.Effect == g.Effect {
			return o.ID, false, nil
		}
	}
	if k, ok := s.keys[g.KeyID]; !ok || k.tenant != tenant {
		return "", false, app.ErrNotFound
	}
	if s.wTenant[g.WorkareaID] != tenant {
		return "", false, app.ErrNotFound
	}
	s.grants[g.ID] = &grantRow{tenant: tenant, grant: g}
	return g.ID, true, nil
}

// GrantGet loads a grant.
func (s *Store) GrantGet(_ context.Context, tenant, id string) (app.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.grants[id]
	if !ok || r.tenant != tenant {
		return app.Grant{}, app.ErrNotFound
	}
	return r.grant, nil
}

// GrantRemove removes a live grant.
func (s *Store) GrantRemove(_ context.Context, tenant, id, _ string, at time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.grants[id]
	if !ok || r.tenant != tenant || r.grant.RemovedAt != nil {
		return false, nil
	}
	r.grant.RemovedAt = &at
	return true, nil
}

// AccessOf reads a key's epoch, revocation, its principal's live ban and
// its live grants.
func (s *Store) AccessOf(_ context.Context, tenant, keyID string) (app.Access, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[keyID]
	if !ok || k.tenant != tenant {
		return app.Access{}, app.ErrNotFound
	}
	a := app.Access{Epoch: s.epochs[tenant], Revoked: k.key.RevokedAt != nil}
	for _, r := range s.bans {
		if r.tenant == tenant && r.ban.Principal.ID == k.key.Principal.ID && r.ban.LiftedAt == nil {
			reason := r.ban.Reason
			a.Ban = &reason
		}
	}
	for _, r := range s.grants {
		g := r.grant
		if r.tenant == tenant && g.KeyID == keyID && g.RemovedAt == nil {
			a.Grants = append(a.Grants, domain.GrantAt{ID: g.ID, WorkareaID: g.WorkareaID, IDPath: s.workareas[g.WorkareaID].IDPath, Scope: g.Scope, Effect: g.Effect})
		}
	}
	return a, nil
}

// AccessAt is AccessOf and the workarea with id byID or path byPath.
func (s *Store) AccessAt(ctx context.Context, tenant, keyID, byID, byPath string) (app.Access, domain.Workarea, bool, error) {
	if byID != "" && byPath != "" {
		return app.Access{}, domain.Workarea{}, false, errors.New("access at a workarea: by id or by path, not both")
	}
	a, err := s.AccessOf(ctx, tenant, keyID)
	if err != nil {
		return a, domain.Workarea{}, false, err
	}
	var w domain.Workarea
	if byID != "" {
		w, err = s.WorkareaGet(ctx, tenant, byID)
	} else {
		w, err = s.WorkareaByPath(ctx, tenant, byPath)
	}
	if errors.Is(err, app.ErrNotFound) {
		return a, domain.Workarea{}, false, nil
	}
	return a, w, err == nil, err
}

// PrincipalByName finds a principal.
func (s *Store) PrincipalByName(_ context.Context, tenant, name string) (app.Principal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.principals[tenant+"/"+name]
	if !ok {
		return app.Principal{}, app.ErrNotFound
	}
	return p, nil
}

// BanCreate stores a ban; a live one for the principal is a conflict.
func (s *Store) BanCreate(_ context.Context, tenant string, b app.Ban) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.bans {
		if r.tenant == tenant && r.ban.Principal.ID == b.Principal.ID && r.ban.LiftedAt == nil {
			return app.ErrConflict
		}
	}
	s.bans[b.ID] = &banRow{tenant: tenant, ban: b}
	return nil
}

// BanLift lifts a live ban.
func (s *Store) BanLift(_ context.Context, tenant, id, _ string, at time.Time) (app.Ban, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.bans[id]
	if !ok || r.tenant != tenant || r.ban.LiftedAt != nil {
		return app.Ban{}, app.ErrNotFound
	}
	r.ban.LiftedAt = &at
	return r.ban, nil
}

// BanList lists bans, newest first.
func (s *Store) BanList(_ context.Context, tenant string) ([]app.Ban, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []app.Ban
	for _, r := range s.bans {
		if r.tenant == tenant {
			out = append(out, r.ban)
		}
	}
	slices.SortFunc(out, func(a, b app.Ban) int { return strings.Compare(b.ID, a.ID) })
	return out, nil
}

// WorkareaPaths maps workarea ids to their paths.
func (s *Store) WorkareaPaths(_ context.Context, tenant string, ids []string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for _, id := range ids {
		if w, ok := s.workareas[id]; ok && s.wTenant[id] == tenant {
			out[id] = w.Path
		}
	}
	return out, nil
}

// WebCredentialCreate stores a web credential.
func (s *Store) WebCredentialCreate(_ context.Context, c app.WebCredential, selector []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.web[string(selector)]; ok {
		return app.ErrConflict
	}
	s.web[string(selector)] = &webRow{cred: c}
	return nil
}

// WebCredentialBySelector loads a web credential with its key.
func (s *Store) WebCredentialBySelector(_ context.Context, selector []byte) (app.WebCredential, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.web[string(selector)]
	if !ok {
		return app.WebCredential{}, app.ErrNotFound
	}
	k, ok := s.keys[w.cred.KeyID]
	if !ok {
		return app.WebCredential{}, app.ErrNotFound
	}
	c := w.cred
	c.KeyRevoked = k.key.RevokedAt != nil
	c.Caller = auth.Caller{TenantID: c.TenantID, KeyID: c.KeyID, PrincipalID: k.key.Principal.ID,
		Principal: k.key.Principal.Name, Role: string(k.key.Role)}
	return c, nil
}

// WebCredentialEnd ends a live, unexpired web credential.
func (s *Store) WebCredentialEnd(_ context.Context, tenant, id string, at time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.web {
		if w.cred.TenantID == tenant && w.cred.ID == id && w.cred.EndedAt == nil && w.cred.ExpiresAt.After(at) {
			w.cred.EndedAt = &at
			return true, nil
		}
	}
	return false, nil
}

// WebCredentialsEndForKey ends a key's live web credentials.
func (s *Store) WebCredentialsEndForKey(_ context.Context, tenant, keyID string, at time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, w := range s.web {
		if w.cred.TenantID == tenant && w.cred.KeyID == keyID && w.cred.EndedAt == nil {
			w.cred.EndedAt = &at
			n++
		}
	}
	return n, nil
}

// GrantStampEpoch records a grant's epoch of effect or removal.
func (s *Store) GrantStampEpoch(_ context.Context, tenant, id string, epoch int64, removed bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.grants[id]
	if !ok || r.tenant != tenant {
		return nil
	}
	if removed {
		r.removedEpoch = &epoch
	} else {
		r.createdEpoch = &epoch
	}
	return nil
}

// GrantsList lists grants by f, in id order.
func (s *Store) GrantsList(_ context.Context, tenant string, f app.GrantFilter) ([]app.ListedGrant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []app.ListedGrant
	for _, r := range s.grants {
		g := r.grant
		if r.tenant != tenant || (f.KeyID != "" && g.KeyID != f.KeyID) || (f.WorkareaID != "" && g.WorkareaID != f.WorkareaID) || g.ID <= f.AfterID {
			continue
		}
		if f.AtEpoch < 0 && g.RemovedAt != nil {
			continue
		}
		if f.AtEpoch >= 0 && (r.createdEpoch == nil || *r.createdEpoch > f.AtEpoch || (r.removedEpoch != nil && *r.removedEpoch <= f.AtEpoch)) {
			continue
		}
		if k, ok := s.keys[g.KeyID]; ok && f.AtEpoch >= 0 && k.revokedEpoch != nil && *k.revokedEpoch <= f.AtEpoch {
			continue
		}
		lg := app.ListedGrant{Grant: g, WorkareaPath: s.workareas[g.WorkareaID].Path, CreatedEpoch: r.createdEpoch, RemovedEpoch: r.removedEpoch}
		if k, ok := s.keys[g.KeyID]; ok {
			lg.Principal, lg.KeyRevoked = k.key.Principal.Name, k.key.RevokedAt != nil
		}
		out = append(out, lg)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// WebCredentialsPurge deletes credentials long ended or expired.
func (s *Store) WebCredentialsPurge(_ context.Context, cutoff time.Time, limit int) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for sel, w := range s.web {
		if int(n) == limit {
			break
		}
		if w.cred.ExpiresAt.Before(cutoff) || (w.cred.EndedAt != nil && w.cred.EndedAt.Before(cutoff)) {
			delete(s.web, sel)
			n++
		}
	}
	return n, nil
}

// WorkareasReadable lists workareas inside allow and outside deny, in tree
// order.
func (s *Store) WorkareasReadable(_ context.Context, tenant string, allow, deny []string, afterID string, limit int) ([]domain.Workarea, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	within := scope.Subtrees{Allow: allow, Deny: deny}
	after := ""
	if afterID != "" {
		w, ok := s.workareas[afterID]
		if !ok || s.wTenant[afterID] != tenant || !within.Contains(w.IDPath) {
			return nil, nil
		}
		after = w.IDPath
	}
	var out []domain.Workarea
	for id, w := range s.workareas {
		if s.wTenant[id] == tenant && within.Contains(w.IDPath) && (after == "" || ltreeLess(after, w.IDPath)) {
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return ltreeLess(out[i].IDPath, out[j].IDPath) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ltreeLess orders id paths as Postgres orders ltree: label by label, a
// prefix first.
func ltreeLess(a, b string) bool {
	return slices.Compare(strings.Split(a, "."), strings.Split(b, ".")) < 0
}

// QuotaSet sets or (0) clears a tenant's or a key's quota.
func (s *Store) QuotaSet(_ context.Context, tenant, keyID string, perMinute int, _ time.Time, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.quotas[tenant]
	if q.Keys == nil {
		q.Keys = map[string]int{}
	}
	switch {
	case keyID == "":
		q.WritesPerMinute = perMinute
	case perMinute == 0:
		delete(q.Keys, keyID)
	default:
		q.Keys[keyID] = perMinute
	}
	s.quotas[tenant] = q
	return nil
}

// QuotasOf reads a tenant's quotas.
func (s *Store) QuotasOf(_ context.Context, tenant string) (app.Quotas, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := app.Quotas{WritesPerMinute: s.quotas[tenant].WritesPerMinute, Keys: map[string]int{}}
	for k, v := range s.quotas[tenant].Keys {
		q.Keys[k] = v
	}
	return q, nil
}

// KeyStampRevokedEpoch records the epoch a key's revocation bumped.
func (s *Store) KeyStampRevokedEpoch(_ context.Context, tenant, id string, epoch int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.keys[id]; ok && r.tenant == tenant {
		r.revokedEpoch = &epoch
	}
	return nil
}
