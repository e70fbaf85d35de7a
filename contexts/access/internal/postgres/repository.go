// Package postgres is the access context's storage adapter: it implements
// app.Repository with sqlc queries over the access schema and translates
// driver errors (no rows → app.ErrNotFound, unique violations →
// app.ErrConflict) at the boundary.
package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/contexts/access/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/auth"
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

// translate maps driver errors to the app's sentinels.
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

// TenantCreate inserts a tenant.
func (r *Repository) TenantCreate(ctx context.Context, id, name string) error {
	return translate(r.q.TenantInsert(ctx, r.conn(ctx), dbsqlc.TenantInsertParams{ID: id, Name: name}))
}

// EpochGet reads the tenant's permission epoch.
func (r *Repository) EpochGet(ctx context.Context, tenant string) (int64, error) {
	e, err := r.q.TenantEpoch(ctx, r.conn(ctx), tenant)
	return e, translate(err)
}

// EpochBump advances the tenant's permission epoch.
func (r *Repository) EpochBump(ctx context.Context, tenant string) (int64, error) {
	e, err := r.q.TenantEpochBump(ctx, r.conn(ctx), tenant)
	return e, translate(err)
}

// PrincipalEnsure returns the named principal, creating it if needed.
func (r *Repository) PrincipalEnsure(ctx context.Context, tenant, name string) (app.Principal, error) {
	row, err := r.q.PrincipalUpsert(ctx, r.conn(ctx), dbsqlc.PrincipalUpsertParams{TenantID: tenant, ID: newPrincipalID(), Name: name})
	return app.Principal{ID: row.ID, Name: row.Name}, translate(err)
}

// KeyCreate stores a key's selector and verifier (never its token).
func (r *Repository) KeyCreate(ctx context.Context, tenant string, k app.Key, selector, verifier []byte, createdBy string) error {
	return translate(r.q.KeyInsert(ctx, r.conn(ctx), dbsqlc.KeyInsertParams{
		TenantID: tenant, ID: k.ID, PrincipalID: k.Principal.ID, Role: string(k.Role),
		Selector: selector, Verifier: verifier, CreatedBy: &createdBy, CreatedAt: k.CreatedAt,
	}))
}

// KeyBySelector finds the key a token names.
func (r *Repository) KeyBySelector(ctx context.Context, selector []byte) (app.KeyAuth, error) {
	row, err := r.q.KeyBySelector(ctx, r.conn(ctx), selector)
	if err != nil {
		return app.KeyAuth{}, translate(err)
	}
	return app.KeyAuth{
		TenantID: row.TenantID,
		Key: app.Key{
			ID: row.ID, Role: domain.Role(row.Role), RevokedAt: row.RevokedAt,
			Principal: app.Principal{ID: row.PrincipalID, Name: row.Principal},
		},
		Verifier: row.Verifier,
	}, nil
}

// KeyGet loads one key of the tenant.
func (r *Repository) KeyGet(ctx context.Context, tenant, id string) (app.Key, error) {
	row, err := r.q.KeyByID(ctx, r.conn(ctx), dbsqlc.KeyByIDParams{TenantID: tenant, ID: id})
	if err != nil {
		return app.Key{}, translate(err)
	}
	return keyFromRow(dbsqlc.KeysListRow(row)), nil
}

// KeyList lists the tenant's keys.
func (r *Repository) KeyList(ctx context.Context, tenant string) ([]app.Key, error) {
	rows, err := r.q.KeysList(ctx, r.conn(ctx), tenant)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]app.Key, len(rows))
	for i, row := range rows {
		out[i] = keyFromRow(row)
	}
	return out, nil
}

func keyFromRow(row dbsqlc.KeysListRow) app.Key {
	return app.Key{
		ID: row.ID, Role: domain.Role(row.Role), CreatedAt: row.CreatedAt, RevokedAt: row.RevokedAt,
		Principal: app.Principal{ID: row.PrincipalID, Name: row.Principal},
	}
}

// KeyRevoke marks a live key revoked; false if it already was.
func (r *Repository) KeyRevoke(ctx context.Context, tenant, id string, at time.Time) (bool, error) {
	n, err := r.q.KeyRevoke(ctx, r.conn(ctx), dbsqlc.KeyRevokeParams{TenantID: tenant, ID: id, RevokedAt: &at})
	return n == 1, translate(err)
}

// WorkareaCreate inserts a node.
func (r *Repository) WorkareaCreate(ctx context.Context, tenant string, w domain.Workarea) error {
	crew, err := crewJSON(w.Crew)
	if err != nil {
		return err
	}
	var parent *string
	if w.ParentID != "" {
		parent = &w.ParentID
	}
	return translate(r.q.WorkareaInsert(ctx, r.conn(ctx), dbsqlc.WorkareaInsertParams{
		TenantID: tenant, ID: w.ID, ParentID: parent, Name: w.Name, Path: w.Path, IDPath: w.IDPath,
		Status: string(w.Status), Crew: crew, CreatedAt: w.CreatedAt,
	}))
}

// WorkareaGet loads a node by id.
func (r *Repository) WorkareaGet(ctx context.Context, tenant, id string) (domain.Workarea, error) {
	row, err := r.q.WorkareaByID(ctx, r.conn(ctx), dbsqlc.WorkareaByIDParams{TenantID: tenant, ID: id})
	if err != nil {
		return domain.Workarea{}, translate(err)
	}
	return workareaFromRow(row)
}

// WorkareasGet loads the tenant's nodes among ids.
func (r *Repository) WorkareasGet(ctx context.Context, tenant string, ids []string) ([]domain.Workarea, error) {
	rows, err := r.q.WorkareasByIDs(ctx, r.conn(ctx), dbsqlc.WorkareasByIDsParams{TenantID: tenant, Ids: ids})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]domain.Workarea, 0, len(rows))
	for _, row := range rows {
		w, err := workareaFromRow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// WorkareaByPath loads a node by its human path.
func (r *Repository) WorkareaByPath(ctx context.Context, tenant, path string) (domain.Workarea, error) {
	row, err := r.q.WorkareaByPath(ctx, r.conn(ctx), dbsqlc.WorkareaByPathParams{TenantID: tenant, Path: path})
	if err != nil {
		return domain.Workarea{}, translate(err)
	}
	return workareaFromRow(row)
}

// WorkareaChildren lists a node's immediate children by name.
func (r *Repository) WorkareaChildren(ctx context.Context, tenant, id string) ([]domain.Workarea, error) {
	rows, err := r.q.WorkareaChildren(ctx, r.conn(ctx), dbsqlc.WorkareaChildrenParams{TenantID: tenant, ParentID: &id})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]domain.Workarea, len(rows))
	for i, row := range rows {
		if out[i], err = workareaFromRow(row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// WorkareaUpdate locks the row, applies fn and writes it back.
func (r *Repository) WorkareaUpdate(ctx context.Context, tenant, id string, fn func(*domain.Workarea) error) (domain.Workarea, error) {
	var out domain.Workarea
	err := r.db.InTx(ctx, func(ctx context.Context) error {
		row, err := r.q.WorkareaByIDForUpdate(ctx, r.conn(ctx), dbsqlc.WorkareaByIDForUpdateParams{TenantID: tenant, ID: id})
		if err != nil {
			return translate(err)
		}
		w, err := workareaFromRow(row)
		if err != nil {
			return err
		}
		if err := fn(&w); err != nil {
			return err
		}
		crew, err := crewJSON(w.Crew)
		if err != nil {
			return err
		}
		err = r.q.WorkareaUpdate(ctx, r.conn(ctx), dbsqlc.WorkareaUpdateParams{
			TenantID: tenant, ID: id, Status: string(w.Status), Crew: crew, UpdatedAt: w.UpdatedAt,
		})
		out = w
		return translate(err)
	})
	return out, err
}

func workareaFromRow(row dbsqlc.AccessWorkarea) (domain.Workarea, error) {
	w := domain.Workarea{
		ID: row.ID, Name: row.Name, Path: row.Path, IDPath: row.IDPath,
		Status: domain.Status(row.Status), CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
	}
	if row.ParentID != nil {
		w.ParentID = *row.ParentID
	}
	if len(row.Crew) > 0 && string(row.Crew) != "null" {
		var c crewRecord
		if err := json.Unmarshal(row.Crew, &c); err != nil {
			return w, fmt.Errorf("decode crew of %s: %w", row.ID, err)
		}
		w.Crew = &domain.Crew{Name: c.Name, CharterURI: c.CharterURI, ExternalManager: c.ExternalManager}
	}
	return w, nil
}

// crewRecord is the stored form of a crew record (workareas.crew jsonb).
type crewRecord struct {
	Name            string `json:"name,omitempty"`
	CharterURI      string `json:"charter_uri,omitempty"`
	ExternalManager string `json:"external_manager,omitempty"`
}

func crewJSON(c *domain.Crew) ([]byte, error) {
	if c == nil {
		return nil, nil
	}
	return json.Marshal(crewRecord{Name: c.Name, CharterURI: c.CharterURI, ExternalManager: c.ExternalManager})
}

// GrantCreate inserts a grant unless an identical live one exists.
func (r *Repository) GrantCreate(ctx context.Context, tenant string, g app.Grant, createdBy string) (string, bool, error) {
	scope, effect := g.Scope.String(), string(g.Effect)
	id, err := r.q.GrantInsert(ctx, r.conn(ctx), dbsqlc.GrantInsertParams{
		TenantID: tenant, ID: g.ID, KeyID: g.KeyID, WorkareaID: g.WorkareaID,
		Scope: scope, Effect: effect, CreatedBy: &createdBy, CreatedAt: g.CreatedAt,
	})
	if err == nil {
		return id, true, nil
	}
	if !pg.IsNoRows(err) {
		return "", false, translate(err)
	}
	// ON CONFLICT DO NOTHING: the identical live grant is committed by now.
	id, err = r.q.GrantLive(ctx, r.conn(ctx), dbsqlc.GrantLiveParams{
		TenantID: tenant, KeyID: g.KeyID, WorkareaID: g.WorkareaID, Scope: scope, Effect: effect,
	})
	return id, false, translate(err)
}

// GrantGet loads a grant, removed or not.
func (r *Repository) GrantGet(ctx context.Context, tenant, id string) (app.Grant, error) {
	row, err := r.q.GrantByID(ctx, r.conn(ctx), dbsqlc.GrantByIDParams{TenantID: tenant, ID: id})
	if err != nil {
		return app.Grant{}, translate(err)
	}
	scope, _ := domain.ParseScope(row.Scope)
	return app.Grant{
		ID: row.ID, KeyID: row.KeyID, WorkareaID: row.WorkareaID, Scope: scope,
		Effect: domain.Effect(row.Effect), CreatedAt: row.CreatedAt, RemovedAt: row.RemovedAt,
	}, nil
}

// GrantRemove marks a live grant removed; false if it was not live.
func (r *Repository) GrantRemove(ctx context.Context, tenant, id, by string, at time.Time) (bool, error) {
	n, err := r.q.GrantRemove(ctx, r.conn(ctx), dbsqlc.GrantRemoveParams{TenantID: tenant, ID: id, RemovedAt: &at, RemovedBy: &by})
	return n == 1, translate(err)
}

// AccessOf reads a key's epoch, revocation, its principal's live ban and
// its live grants in one statement.
func (r *Repository) AccessOf(ctx context.Context, tenant, keyID string) (app.Access, error) {
	a, _, _, err := r.AccessAt(ctx, tenant, keyID, "", "")
	return a, err
}

// AccessAt is AccessOf and, in the same statement, the workarea with id
// byID or path byPath (one of them empty, or both for none); found is
// false when the tenant has none.
func (r *Repository) AccessAt(ctx context.Context, tenant, keyID, byID, byPath string) (app.Access, domain.Workarea, bool, error) {
	if byID != "" && byPath != "" {
		return app.Access{}, domain.Workarea{}, false, errors.New("access at a workarea: by id or by path, not both")
	}
	rows, err := r.q.AccessSnapshot(ctx, r.conn(ctx), dbsqlc.AccessSnapshotParams{
		TenantID: tenant, KeyID: keyID, AtID: nullable(byID), AtPath: nullable(byPath),
	})
	if err != nil {
		return app.Access{}, domain.Workarea{}, false, translate(err)
	}
	if len(rows) == 0 {
		return app.Access{}, domain.Workarea{}, false, app.ErrNotFound
	}
	at := rows[0]
	a := app.Access{Epoch: at.PermissionEpoch, Revoked: at.RevokedAt != nil, Ban: at.BanReason}
	for _, row := range rows {
		if row.GrantID == nil {
			continue // the key has no grants: one row of NULLs
		}
		scope, _ := domain.ParseScope(*row.Scope)
		a.Grants = append(a.Grants, domain.GrantAt{
			ID: *row.GrantID, WorkareaID: *row.WorkareaID, IDPath: row.IDPath, Scope: scope, Effect: domain.Effect(*row.Effect),
		})
	}
	if at.AtID == nil {
		return a, domain.Workarea{}, false, nil
	}
	w, err := workareaFromRow(dbsqlc.AccessWorkarea{
		TenantID: tenant, ID: *at.AtID, ParentID: at.AtParentID, Name: at.AtName, Path: at.AtPath,
		IDPath: at.AtIDPath, Status: at.AtStatus, Crew: at.AtCrew, CreatedAt: at.AtCreatedAt, UpdatedAt: at.AtUpdatedAt,
	})
	return a, w, err == nil, err
}

// nullable is s, or NULL when it is empty.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func newPrincipalID() string { return ids.New(ids.Principal) }

// PrincipalByName finds a principal.
func (r *Repository) PrincipalByName(ctx context.Context, tenant, name string) (app.Principal, error) {
	row, err := r.q.PrincipalByName(ctx, r.conn(ctx), dbsqlc.PrincipalByNameParams{TenantID: tenant, Name: name})
	return app.Principal{ID: row.ID, Name: row.Name}, translate(err)
}

// BanCreate stores a ban; a live one for the principal is a conflict.
func (r *Repository) BanCreate(ctx context.Context, tenant string, b app.Ban) error {
	return translate(r.q.BanInsert(ctx, r.conn(ctx), dbsqlc.BanInsertParams{
		TenantID: tenant, ID: b.ID, PrincipalID: b.Principal.ID, Reason: b.Reason, CreatedBy: b.CreatedBy, CreatedAt: b.CreatedAt,
	}))
}

// BanLift lifts a live ban.
func (r *Repository) BanLift(ctx context.Context, tenant, id, by string, at time.Time) (app.Ban, error) {
	principal, err := r.q.BanLift(ctx, r.conn(ctx), dbsqlc.BanLiftParams{TenantID: tenant, ID: id, LiftedBy: &by, LiftedAt: &at})
	return app.Ban{ID: id, Principal: app.Principal{ID: principal}, LiftedAt: &at}, translate(err)
}

// BanList lists bans, newest first.
func (r *Repository) BanList(ctx context.Context, tenant string) ([]app.Ban, error) {
	rows, err := r.q.BansList(ctx, r.conn(ctx), tenant)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]app.Ban, len(rows))
	for i, row := range rows {
		out[i] = app.Ban{ID: row.ID, Principal: app.Principal{ID: row.PrincipalID, Name: row.Principal}, Reason: row.Reason,
			CreatedAt: row.CreatedAt, LiftedAt: row.LiftedAt}
	}
	return out, nil
}

// WorkareaPaths maps workarea ids to their paths.
func (r *Repository) WorkareaPaths(ctx context.Context, tenant string, ids []string) (map[string]string, error) {
	rows, err := r.q.WorkareaPaths(ctx, r.conn(ctx), dbsqlc.WorkareaPathsParams{TenantID: tenant, Ids: ids})
	if err != nil {
		return nil, translate(err)
	}
	out := make(map[string]string, len(rows))
	for _, row := range rows {
		out[row.ID] = row.Path
	}
	return out, nil
}

// WebCredentialCreate stores a web credential.
func (r *Repository) WebCredentialCreate(ctx context.Context, c app.WebCredential, selector []byte) error {
	return translate(r.q.WebCredentialInsert(ctx, r.conn(ctx), dbsqlc.WebCredentialInsertParams{
		TenantID: c.TenantID, ID: c.ID, KeyID: c.KeyID, Kind: string(c.Kind), Selector: selector, Verifier: c.Verifier,
		CreatedAt: c.CreatedAt, ExpiresAt: c.ExpiresAt,
	}))
}

// WebCredentialBySelector loads a web credential with its key.
func (r *Repository) WebCredentialBySelector(ctx context.Context, selector []byte) (app.WebCredential, error) {
	row, err := r.q.WebCredentialBySelector(ctx, r.conn(ctx), selector)
	if err != nil {
		return app.WebCredential{}, translate(err)
	}
	return app.WebCredential{
		TenantID: row.TenantID, ID: row.ID, KeyID: row.KeyID, Kind: app.WebKind(row.Kind), Verifier: row.Verifier,
		ExpiresAt: row.ExpiresAt, EndedAt: row.EndedAt, KeyRevoked: row.RevokedAt != nil,
		Caller: auth.Caller{TenantID: row.TenantID, KeyID: row.KeyID, PrincipalID: row.PrincipalID, Principal: row.Principal, Role: row.Role},
	}, nil
}

// WebCredentialEnd ends a live, unexpired web credential.
func (r *Repository) WebCredentialEnd(ctx context.Context, tenant, id string, at time.Time) (bool, error) {
	n, err := r.q.WebCredentialEnd(ctx, r.conn(ctx), dbsqlc.WebCredentialEndParams{TenantID: tenant, ID: id, EndedAt: &at})
	return n == 1, translate(err)
}

// WebCredentialsEndForKey ends a key's live web credentials.
func (r *Repository) WebCredentialsEndForKey(ctx context.Context, tenant, keyID string, at time.Time) (int64, error) {
	n, err := r.q.WebCredentialsEndForKey(ctx, r.conn(ctx), dbsqlc.WebCredentialsEndForKeyParams{TenantID: tenant, KeyID: keyID, EndedAt: &at})
	return n, translate(err)
}

// GrantStampEpoch records a grant's epoch of effect or removal.
func (r *Repository) GrantStampEpoch(ctx context.Context, tenant, id string, epoch int64, removed bool) error {
	return translate(r.q.GrantStampEpoch(ctx, r.conn(ctx), dbsqlc.GrantStampEpochParams{TenantID: tenant, ID: id, Epoch: epoch, Removed: removed}))
}

// GrantsList lists grants by f.
func (r *Repository) GrantsList(ctx context.Context, tenant string, f app.GrantFilter) ([]app.ListedGrant, error) {
	rows, err := r.q.GrantsList(ctx, r.conn(ctx), dbsqlc.GrantsListParams{
		TenantID: tenant, KeyID: f.KeyID, WorkareaID: f.WorkareaID, AtEpoch: f.AtEpoch, AfterID: f.AfterID, MaxRows: int32(f.Limit),
	})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]app.ListedGrant, len(rows))
	for i, row := range rows {
		scope, _ := domain.ParseScope(row.Scope)
		out[i] = app.ListedGrant{
			Grant: app.Grant{ID: row.ID, KeyID: row.KeyID, WorkareaID: row.WorkareaID, Scope: scope, Effect: domain.Effect(row.Effect),
				CreatedAt: row.CreatedAt, RemovedAt: row.RemovedAt},
			Principal: row.Principal, WorkareaPath: row.WorkareaPath, KeyRevoked: row.KeyRevoked,
			CreatedEpoch: row.CreatedEpoch, RemovedEpoch: row.RemovedEpoch,
		}
	}
	return out, nil
}

// WebCredentialsPurge deletes credentials long ended or expired.
func (r *Repository) WebCredentialsPurge(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	n, err := r.q.WebCredentialsPurge(ctx, r.conn(ctx), dbsqlc.WebCredentialsPurgeParams{Cutoff: cutoff, MaxRows: int32(limit)})
	return n, translate(err)
}

// WorkareasReadable lists workareas inside allow and outside deny, in tree
// order.
func (r *Repository) WorkareasReadable(ctx context.Context, tenant string, allow, deny []string, afterID string, limit int) ([]domain.Workarea, error) {
	rows, err := r.q.WorkareasReadable(ctx, r.conn(ctx), dbsqlc.WorkareasReadableParams{
		TenantID: tenant, Allow: orEmptyStrings(allow), Deny: orEmptyStrings(deny), AfterID: afterID, MaxRows: int32(limit),
	})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]domain.Workarea, len(rows))
	for i, row := range rows {
		if out[i], err = workareaFromRow(row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func orEmptyStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// QuotaSet sets or (0) clears a tenant's or a key's quota.
func (r *Repository) QuotaSet(ctx context.Context, tenant, keyID string, perMinute int, at time.Time, by string) error {
	if perMinute == 0 {
		_, err := r.q.QuotaClear(ctx, r.conn(ctx), dbsqlc.QuotaClearParams{TenantID: tenant, KeyID: keyID})
		return translate(err)
	}
	n := int32(perMinute)
	if keyID == "" {
		return translate(r.q.QuotaSetTenant(ctx, r.conn(ctx), dbsqlc.QuotaSetTenantParams{TenantID: tenant, WritesPerMinute: &n, UpdatedAt: at, UpdatedBy: by}))
	}
	return translate(r.q.QuotaSetKey(ctx, r.conn(ctx), dbsqlc.QuotaSetKeyParams{TenantID: tenant, KeyID: keyID, RequestsPerMinute: &n, UpdatedAt: at, UpdatedBy: by}))
}

// QuotasOf reads a tenant's quotas.
func (r *Repository) QuotasOf(ctx context.Context, tenant string) (app.Quotas, error) {
	rows, err := r.q.QuotasOf(ctx, r.conn(ctx), tenant)
	if err != nil {
		return app.Quotas{}, translate(err)
	}
	q := app.Quotas{Keys: map[string]int{}}
	for _, row := range rows {
		if row.KeyID == "" && row.WritesPerMinute != nil {
			q.WritesPerMinute = int(*row.WritesPerMinute)
		} else if row.RequestsPerMinute != nil {
			q.Keys[row.KeyID] = int(*row.RequestsPerMinute)
		}
	}
	return q, nil
}

// KeyStampRevokedEpoch records the epoch a key's revocation bumped.
func (r *Repository) KeyStampRevokedEpoch(ctx context.Context, tenant, id string, epoch int64) error {
	return translate(r.q.KeyStampRevokedEpoch(ctx, r.conn(ctx), dbsqlc.KeyStampRevokedEpochParams{TenantID: tenant, ID: id, RevokedEpoch: &epoch}))
}
