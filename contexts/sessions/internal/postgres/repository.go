// Package postgres is the sessions context's storage: sessions, the
// active-session pointers and the session brains over the sessions
// schema.
package postgres

import (
	"context"
	"time"

	"github.com/omlhub/oml/contexts/sessions/internal/app"
	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/contexts/sessions/internal/postgres/dbsqlc"
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
	if pg.IsNoRows(err) {
		return app.ErrNotFound
	}
	return err
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func sessionFromRow(r dbsqlc.SessionsSession) domain.Session {
	return domain.Session{
		TenantID: r.TenantID, ID: r.ID, WorkareaID: r.WorkareaID, WorkareaIDPath: r.WorkareaIDPath, Name: r.Name,
		Owner:  domain.Owner{PrincipalID: r.OwnerPrincipalID, Principal: r.OwnerPrincipal, KeyID: r.OwnerKeyID},
		Status: domain.Status(r.Status), HandoffNote: r.HandoffNote,
		AdoptedFrom: deref(r.AdoptedFrom), ForkedFrom: deref(r.ForkedFrom),
		StartedAt: r.StartedAt, UpdatedAt: r.UpdatedAt, EndedAt: r.EndedAt, EndedByKeyID: deref(r.EndedByKeyID),
	}
}

// Insert stores a new session; false when its (workarea, owner, name) is
// taken.
func (r *Repository) Insert(ctx context.Context, s domain.Session) (bool, error) {
	n, err := r.q.SessionInsert(ctx, r.conn(ctx), dbsqlc.SessionInsertParams{
		TenantID: s.TenantID, ID: s.ID, WorkareaID: s.WorkareaID, WorkareaIDPath: s.WorkareaIDPath, Name: s.Name,
		OwnerPrincipalID: s.Owner.PrincipalID, OwnerPrincipal: s.Owner.Principal, OwnerKeyID: s.Owner.KeyID,
		Status: string(s.Status), HandoffNote: s.HandoffNote, AdoptedFrom: optional(s.AdoptedFrom),
		ForkedFrom: optional(s.ForkedFrom), StartedAt: s.StartedAt, UpdatedAt: s.UpdatedAt,
	})
	return n == 1, err
}

// GetForUpdate reads and locks one session.
// Get reads a session without locking it.
func (r *Repository) Get(ctx context.Context, tenant, id string) (domain.Session, error) {
	row, err := r.q.SessionGet(ctx, r.conn(ctx), dbsqlc.SessionGetParams{TenantID: tenant, ID: id})
	return sessionFromRow(row), translate(err)
}

func (r *Repository) GetForUpdate(ctx context.Context, tenant, id string) (domain.Session, error) {
	row, err := r.q.SessionGetForUpdate(ctx, r.conn(ctx), dbsqlc.SessionGetForUpdateParams{TenantID: tenant, ID: id})
	return sessionFromRow(row), translate(err)
}

// ByOwnerNameForUpdate reads and locks a principal's session by name.
func (r *Repository) ByOwnerNameForUpdate(ctx context.Context, tenant, workarea, principal, name string) (domain.Session, error) {
	row, err := r.q.SessionByOwnerNameForUpdate(ctx, r.conn(ctx), dbsqlc.SessionByOwnerNameForUpdateParams{
		TenantID: tenant, WorkareaID: workarea, OwnerPrincipalID: principal, Name: name,
	})
	return sessionFromRow(row), translate(err)
}

// Update writes a session's mutable fields.
func (r *Repository) Update(ctx context.Context, s domain.Session) error {
	return r.q.SessionUpdate(ctx, r.conn(ctx), dbsqlc.SessionUpdateParams{
		TenantID: s.TenantID, ID: s.ID, Name: s.Name,
		OwnerPrincipalID: s.Owner.PrincipalID, OwnerPrincipal: s.Owner.Principal, OwnerKeyID: s.Owner.KeyID,
		Status: string(s.Status), HandoffNote: s.HandoffNote, AdoptedFrom: optional(s.AdoptedFrom),
		ForkedFrom: optional(s.ForkedFrom), UpdatedAt: s.UpdatedAt, EndedAt: s.EndedAt, EndedByKeyID: optional(s.EndedByKeyID),
	})
}

// List reads a page of sessions.
func (r *Repository) List(ctx context.Context, q app.ListQuery) ([]domain.Session, error) {
	rows, err := r.q.SessionsList(ctx, r.conn(ctx), dbsqlc.SessionsListParams{
		TenantID: q.TenantID, Allow: q.Readable.Allow, Deny: nonNil(q.Readable.Deny), Under: q.Under,
		Status: string(q.Status), After: q.After, MaxRows: int32(q.Limit),
	})
	if err != nil {
		return nil, err
	}
	out := make([]domain.Session, len(rows))
	for i, row := range rows {
		out[i] = sessionFromRow(row)
	}
	return out, nil
}

// LatestOfOwner lists a principal's sessions in one workarea, most
// recently active first.
func (r *Repository) LatestOfOwner(ctx context.Context, tenant, workarea, principalID string, limit int) ([]domain.Session, error) {
	rows, err := r.q.SessionsLatestOfOwner(ctx, r.conn(ctx), dbsqlc.SessionsLatestOfOwnerParams{
		TenantID: tenant, WorkareaID: workarea, OwnerPrincipalID: principalID, MaxRows: int32(limit),
	})
	if err != nil {
		return nil, err
	}
	out := make([]domain.Session, len(rows))
	for i, row := range rows {
		out[i] = sessionFromRow(row)
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// SetActive points key's active session in workarea at session.
func (r *Repository) SetActive(ctx context.Context, tenant, key, workarea, session string, at time.Time) error {
	return r.q.ActiveSet(ctx, r.conn(ctx), dbsqlc.ActiveSetParams{
		TenantID: tenant, KeyID: key, WorkareaID: workarea, SessionID: session, SetAt: at,
	})
}

// ActiveOf lists key's active sessions, most recently set first.
func (r *Repository) ActiveOf(ctx context.Context, tenant, key string) ([]app.Active, error) {
	rows, err := r.q.ActiveOfKey(ctx, r.conn(ctx), dbsqlc.ActiveOfKeyParams{TenantID: tenant, KeyID: key})
	if err != nil {
		return nil, err
	}
	out := make([]app.Active, len(rows))
	for i, row := range rows {
		out[i] = app.Active{WorkareaID: row.WorkareaID, SessionID: row.SessionID, SetAt: row.SetAt}
	}
	return out, nil
}

// ClearActive drops every pointer to session.
func (r *Repository) ClearActive(ctx context.Context, tenant, session string) error {
	return r.q.ActiveClear(ctx, r.conn(ctx), dbsqlc.ActiveClearParams{TenantID: tenant, SessionID: session})
}

// Owned lists a principal's sessions that are not pruned.
func (r *Repository) Owned(ctx context.Context, tenant, principal string, limit int) ([]string, error) {
	return r.q.SessionsOwned(ctx, r.conn(ctx), dbsqlc.SessionsOwnedParams{TenantID: tenant, OwnerPrincipalID: principal, MaxRows: int32(limit)})
}
