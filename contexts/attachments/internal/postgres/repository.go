// Package postgres is the attachments context's storage: upload sessions,
// blobs (with their wrapped data keys), bindings and the queue of objects
// to remove from the store.
package postgres

import (
	"context"
	"time"

	"github.com/omlhub/oml/contexts/attachments/internal/app"
	"github.com/omlhub/oml/contexts/attachments/internal/domain"
	"github.com/omlhub/oml/contexts/attachments/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/pg"
)

// Repository implements app.Repository.
type Repository struct {
	db *pg.DB
	q  *dbsqlc.Queries
}

// New returns a repository.
func New(db *pg.DB) *Repository { return &Repository{db: db, q: dbsqlc.New()} }

func (r *Repository) conn(ctx context.Context) dbsqlc.DBTX { return r.db.Conn(ctx) }

func translate(err error) error {
	if pg.IsNoRows(err) {
		return app.ErrNotFound
	}
	return err
}

func ptr[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

func val[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func sha(b []byte) [32]byte {
	var out [32]byte
	copy(out[:], b)
	return out
}

func session(row dbsqlc.AttachmentsSession) domain.Session {
	return domain.Session{
		ID: row.ID, TenantID: row.TenantID, KeyID: row.KeyID, State: domain.State(row.State), MediaType: row.MediaType,
		Size: row.SizeBytes, ExpectedSHA256: sha(row.ExpectedSha256), PartSize: row.PartSize,
		PartsReceived: int(row.PartsReceived), BytesReceived: row.BytesReceived, HashState: row.HashState,
		PartSHA256: row.PartSha256, PartETags: row.PartEtags, PartWrites: row.PartWrites,
		Address: row.Address, ObjectKey: row.ObjectKey, StoreUpload: row.StoreUpload, WrappedKey: row.WrappedKey,
		Reason: val(row.Reason), CreatedAt: row.CreatedAt, ExpiresAt: row.ExpiresAt, CompletedAt: row.CompletedAt, BoundAt: row.BoundAt,
	}
}

func sessions(rows []dbsqlc.AttachmentsSession) []domain.Session {
	out := make([]domain.Session, len(rows))
	for i, row := range rows {
		out[i] = session(row)
	}
	return out
}

func (r *Repository) SessionInsert(ctx context.Context, s domain.Session) error {
	return r.q.SessionInsert(ctx, r.conn(ctx), dbsqlc.SessionInsertParams{
		TenantID: s.TenantID, ID: s.ID, KeyID: s.KeyID, MediaType: s.MediaType, SizeBytes: s.Size,
		ExpectedSha256: s.ExpectedSHA256[:], PartSize: s.PartSize, Address: s.Address,
		ObjectKey: s.ObjectKey, StoreUpload: s.StoreUpload, WrappedKey: s.WrappedKey,
		CreatedAt: s.CreatedAt, ExpiresAt: s.ExpiresAt,
	})
}

func (r *Repository) SessionGet(ctx context.Context, tenant, id string) (domain.Session, error) {
	row, err := r.q.SessionGet(ctx, r.conn(ctx), dbsqlc.SessionGetParams{TenantID: tenant, ID: id})
	if err != nil {
		return domain.Session{}, translate(err)
	}
	return session(row), nil
}

func (r *Repository) SessionsForBind(ctx context.Context, tenant string, ids []string) ([]domain.Session, error) {
	rows, err := r.q.SessionsForBind(ctx, r.conn(ctx), dbsqlc.SessionsForBindParams{TenantID: tenant, Ids: ids})
	return sessions(rows), err
}

func (r *Repository) OpenCount(ctx context.Context, tenant, keyID string, now time.Time) (int, error) {
	n, err := r.q.SessionsOpenCount(ctx, r.conn(ctx), dbsqlc.SessionsOpenCountParams{TenantID: tenant, KeyID: keyID, Now: now})
	return int(n), err
}

// TenantLimit is the tenant's own size ceiling; ok is false when it has
// none.
func (r *Repository) TenantLimit(ctx context.Context, tenant string) (int64, bool, error) {
	n, err := r.q.TenantLimit(ctx, r.conn(ctx), tenant)
	if pg.IsNoRows(err) {
		return 0, false, nil
	}
	return n, err == nil, err
}

// SetTenantLimit sets the tenant's size ceiling, or clears it (0).
func (r *Repository) SetTenantLimit(ctx context.Context, tenant string, maxBytes int64) error {
	if maxBytes == 0 {
		return r.q.TenantLimitClear(ctx, r.conn(ctx), tenant)
	}
	return r.q.TenantLimitSet(ctx, r.conn(ctx), dbsqlc.TenantLimitSetParams{TenantID: tenant, MaxUploadBytes: maxBytes})
}

func (r *Repository) Lease(ctx context.Context, tenant, id, token string, until, now time.Time) (domain.Session, bool, error) {
	row, err := r.q.SessionLease(ctx, r.conn(ctx), dbsqlc.SessionLeaseParams{Token: &token, Until: &until, TenantID: tenant, ID: id, Now: &now})
	if pg.IsNoRows(err) {
		return domain.Session{}, false, nil
	}
	if err != nil {
		return domain.Session{}, false, err
	}
	return session(row), true, nil
}

func (r *Repository) Release(ctx context.Context, tenant, id, token string) error {
	return r.q.SessionRelease(ctx, r.conn(ctx), dbsqlc.SessionReleaseParams{TenantID: tenant, ID: id, Token: &token})
}

func (r *Repository) Progress(ctx context.Context, s domain.Session, token string) error {
	n, err := r.q.SessionProgress(ctx, r.conn(ctx), dbsqlc.SessionProgressParams{
		PartsReceived: int32(s.PartsReceived), BytesReceived: s.BytesReceived, HashState: s.HashState,
		PartSha256: s.PartSHA256, PartEtags: s.PartETags, PartWrites: s.PartWrites,
		State: string(s.State), Reason: ptr(s.Reason), CompletedAt: s.CompletedAt,
		TenantID: s.TenantID, ID: s.ID, Token: &token,
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return app.ErrLeaseLost
	}
	return nil
}

func (r *Repository) SessionKeyForUpdate(ctx context.Context, tenant, id, token string) ([]byte, error) {
	key, err := r.q.SessionKeyForUpdate(ctx, r.conn(ctx), dbsqlc.SessionKeyForUpdateParams{TenantID: tenant, ID: id, Token: &token})
	if pg.IsNoRows(err) {
		return nil, app.ErrLeaseLost
	}
	return key, err
}

func (r *Repository) Close(ctx context.Context, tenant, id string, state domain.State, reason string) (domain.Session, bool, error) {
	row, err := r.q.SessionClose(ctx, r.conn(ctx), dbsqlc.SessionCloseParams{State: string(state), Reason: &reason, TenantID: tenant, ID: id})
	if pg.IsNoRows(err) {
		return domain.Session{}, false, nil
	}
	if err != nil {
		return domain.Session{}, false, err
	}
	return session(row), true, nil
}

func (r *Repository) ExpireDue(ctx context.Context, now time.Time, limit int) ([]domain.Session, error) {
	rows, err := r.q.SessionsExpireDue(ctx, r.conn(ctx), dbsqlc.SessionsExpireDueParams{Now: now, MaxRows: int32(limit)})
	return sessions(rows), err
}

func (r *Repository) LockAddress(ctx context.Context, tenant, address string) error {
	if err := pg.InTxRequired(ctx); err != nil {
		return err
	}
	return r.q.AddressLock(ctx, r.conn(ctx), dbsqlc.AddressLockParams{TenantID: tenant, Address: address})
}

func blob(row dbsqlc.AttachmentsBlob) app.Blob {
	return app.Blob{
		TenantID: row.TenantID, SHA256: sha(row.Sha256), Address: row.Address, ObjectKey: row.ObjectKey,
		Size: row.SizeBytes, PartSize: row.PartSize, PartWrites: row.PartWrites, WrappedKey: row.WrappedKey, CreatedAt: row.CreatedAt,
	}
}

func (r *Repository) BlobGet(ctx context.Context, tenant string, sum [32]byte) (app.Blob, error) {
	row, err := r.q.BlobGet(ctx, r.conn(ctx), dbsqlc.BlobGetParams{TenantID: tenant, Sha256: sum[:]})
	if err != nil {
		return app.Blob{}, translate(err)
	}
	return blob(row), nil
}

func (r *Repository) BlobInsert(ctx context.Context, b app.Blob) error {
	return r.q.BlobInsert(ctx, r.conn(ctx), dbsqlc.BlobInsertParams{
		TenantID: b.TenantID, Sha256: b.SHA256[:], Address: b.Address, ObjectKey: b.ObjectKey, SizeBytes: b.Size,
		PartSize: b.PartSize, PartWrites: b.PartWrites, WrappedKey: b.WrappedKey, CreatedAt: b.CreatedAt,
	})
}

func (r *Repository) BlobDelete(ctx context.Context, tenant string, sum [32]byte) (app.Blob, error) {
	row, err := r.q.BlobDelete(ctx, r.conn(ctx), dbsqlc.BlobDeleteParams{TenantID: tenant, Sha256: sum[:]})
	if err != nil {
		return app.Blob{}, translate(err)
	}
	return blob(row), nil
}

func (r *Repository) BlobInUse(ctx context.Context, tenant string, sum [32]byte, now time.Time) (bool, error) {
	used, err := r.q.BlobInUse(ctx, r.conn(ctx), dbsqlc.BlobInUseParams{TenantID: tenant, Sha256: sum[:], Now: now})
	return val(used), err
}

func (r *Repository) BlobsUnused(ctx context.Context, now time.Time, limit int) ([]app.Blob, error) {
	rows, err := r.q.BlobsUnused(ctx, r.conn(ctx), dbsqlc.BlobsUnusedParams{Now: now, MaxRows: int32(limit)})
	out := make([]app.Blob, len(rows))
	for i, row := range rows {
		out[i] = app.Blob{TenantID: row.TenantID, SHA256: sha(row.Sha256)}
	}
	return out, err
}

func (r *Repository) SessionBind(ctx context.Context, tenant, id string, at time.Time) (bool, error) {
	n, err := r.q.SessionBind(ctx, r.conn(ctx), dbsqlc.SessionBindParams{At: &at, TenantID: tenant, ID: id})
	return n == 1, err
}

func (r *Repository) BindingInsert(ctx context.Context, b app.Binding) error {
	return r.q.BindingInsert(ctx, r.conn(ctx), dbsqlc.BindingInsertParams{
		TenantID: b.TenantID, ArtifactID: b.ArtifactID, Sha256: b.SHA256[:], SessionID: b.SessionID, MediaType: b.MediaType, SizeBytes: b.Size,
	})
}

func binding(row dbsqlc.AttachmentsBinding) app.Binding {
	return app.Binding{TenantID: row.TenantID, ArtifactID: row.ArtifactID, SHA256: sha(row.Sha256), SessionID: row.SessionID, MediaType: row.MediaType, Size: row.SizeBytes}
}

func (r *Repository) BindingGet(ctx context.Context, tenant, artifact string, sum [32]byte) (app.Binding, error) {
	row, err := r.q.BindingGet(ctx, r.conn(ctx), dbsqlc.BindingGetParams{TenantID: tenant, ArtifactID: artifact, Sha256: sum[:]})
	if err != nil {
		return app.Binding{}, translate(err)
	}
	return binding(row), nil
}

func (r *Repository) BindingsList(ctx context.Context, tenant, artifact string) ([]app.Binding, error) {
	rows, err := r.q.BindingsList(ctx, r.conn(ctx), dbsqlc.BindingsListParams{TenantID: tenant, ArtifactID: artifact})
	out := make([]app.Binding, len(rows))
	for i, row := range rows {
		out[i] = binding(row)
	}
	return out, err
}

func (r *Repository) BindingsDelete(ctx context.Context, tenant, artifact string) ([][32]byte, error) {
	rows, err := r.q.BindingsDelete(ctx, r.conn(ctx), dbsqlc.BindingsDeleteParams{TenantID: tenant, ArtifactID: artifact})
	out := make([][32]byte, len(rows))
	for i, row := range rows {
		out[i] = sha(row)
	}
	return out, err
}

func (r *Repository) SessionsScrub(ctx context.Context, tenant string, sum [32]byte) error {
	return r.q.SessionsScrub(ctx, r.conn(ctx), dbsqlc.SessionsScrubParams{TenantID: tenant, Sha256: sum[:]})
}

func (r *Repository) DoomedInsert(ctx context.Context, d app.Doomed, at time.Time) (int64, error) {
	notBefore := d.NotBefore
	if notBefore.IsZero() {
		notBefore = at
	}
	return r.q.DoomedInsert(ctx, r.conn(ctx), dbsqlc.DoomedInsertParams{
		TenantID: d.TenantID, ObjectKey: d.ObjectKey, StoreUpload: ptr(d.StoreUpload), QueuedAt: at, NotBefore: notBefore,
	})
}

func (r *Repository) DoomedClaim(ctx context.Context, now, until time.Time, limit int) ([]app.Doomed, error) {
	rows, err := r.q.DoomedClaim(ctx, r.conn(ctx), dbsqlc.DoomedClaimParams{Until: until, Now: now, MaxRows: int32(limit)})
	out := make([]app.Doomed, len(rows))
	for i, row := range rows {
		out[i] = app.Doomed{ID: row.ID, TenantID: row.TenantID, ObjectKey: row.ObjectKey, StoreUpload: val(row.StoreUpload), NotBefore: row.NotBefore}
	}
	return out, err
}

func (r *Repository) DoomedDelete(ctx context.Context, id int64) error {
	return r.q.DoomedDelete(ctx, r.conn(ctx), id)
}

func (r *Repository) BlobKeysAfter(ctx context.Context, after app.WrappedKey, limit int) ([]app.WrappedKey, error) {
	rows, err := r.q.BlobKeysAfter(ctx, r.conn(ctx), dbsqlc.BlobKeysAfterParams{TenantID: after.TenantID, Sha256: after.SHA256[:], MaxRows: int32(limit)})
	out := make([]app.WrappedKey, len(rows))
	for i, row := range rows {
		out[i] = app.WrappedKey{TenantID: row.TenantID, SHA256: sha(row.Sha256), Address: row.Address, Wrapped: row.WrappedKey}
	}
	return out, err
}

func (r *Repository) SessionKeysAfter(ctx context.Context, after app.WrappedKey, limit int) ([]app.WrappedKey, error) {
	rows, err := r.q.SessionKeysAfter(ctx, r.conn(ctx), dbsqlc.SessionKeysAfterParams{TenantID: after.TenantID, ID: after.Session, MaxRows: int32(limit)})
	out := make([]app.WrappedKey, len(rows))
	for i, row := range rows {
		out[i] = app.WrappedKey{TenantID: row.TenantID, Session: row.ID, Address: row.Address, Wrapped: row.WrappedKey}
	}
	return out, err
}

func (r *Repository) RewrapKey(ctx context.Context, k app.WrappedKey, next []byte) (bool, error) {
	var n int64
	var err error
	if k.Session != "" {
		n, err = r.q.SessionKeyRewrap(ctx, r.conn(ctx), dbsqlc.SessionKeyRewrapParams{Next: next, TenantID: k.TenantID, ID: k.Session, Prev: k.Wrapped})
	} else {
		n, err = r.q.BlobKeyRewrap(ctx, r.conn(ctx), dbsqlc.BlobKeyRewrapParams{Next: next, TenantID: k.TenantID, Sha256: k.SHA256[:], Prev: k.Wrapped})
	}
	return n == 1, err
}

func (r *Repository) AddressSample(ctx context.Context) (string, [32]byte, string, bool, error) {
	rows, err := r.q.AddressSample(ctx, r.conn(ctx))
	if pg.IsCode(err, "42P01") {
		return "", [32]byte{}, "", false, nil // not migrated yet: nothing stored
	}
	if err != nil || len(rows) == 0 {
		return "", [32]byte{}, "", false, err
	}
	return rows[0].TenantID, sha(rows[0].ExpectedSha256), rows[0].Address, true, nil
}
