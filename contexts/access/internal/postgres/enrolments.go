package postgres

import (
	"context"
	"time"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/pg"
)

// Enrolments implements app.Enrolments over access.enrolments.
type Enrolments struct {
	db *pg.DB
	q  *dbsqlc.Queries
}

var _ app.Enrolments = (*Enrolments)(nil)

// NewEnrolments returns the enrolments' storage on db.
func NewEnrolments(db *pg.DB) *Enrolments { return &Enrolments{db: db, q: dbsqlc.New()} }

// TenantByName implements app.Enrolments.
func (s *Enrolments) TenantByName(ctx context.Context, name string) (string, error) {
	id, err := s.q.TenantByName(ctx, s.db.Conn(ctx), name)
	return id, translate(err)
}

// Insert implements app.Enrolments.
func (s *Enrolments) Insert(ctx context.Context, e app.Enrolment) error {
	return translate(s.q.EnrolmentInsert(ctx, s.db.Conn(ctx), dbsqlc.EnrolmentInsertParams{
		TenantID: e.TenantID, ID: e.ID, Selector: e.Selector, Verifier: e.Verifier, Reason: e.Reason, Peer: e.Peer, CreatedAt: e.CreatedAt,
		ExpiresAt: e.ExpiresAt,
	}))
}

// SetItem implements app.Enrolments.
func (s *Enrolments) SetItem(ctx context.Context, tenant, id, item string) error {
	return translate(s.q.EnrolmentSetItem(ctx, s.db.Conn(ctx), dbsqlc.EnrolmentSetItemParams{TenantID: tenant, ID: id, ItemID: item}))
}

func enrolmentFrom(r dbsqlc.AccessEnrolment) app.Enrolment {
	e := app.Enrolment{TenantID: r.TenantID, ID: r.ID, Selector: r.Selector, Verifier: r.Verifier, Reason: r.Reason, Peer: r.Peer,
		Status: r.Status, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, DecidedAt: r.DecidedAt, Note: r.Note, ItemID: r.ItemID}
	if r.KeyID != nil {
		e.KeyID = *r.KeyID
	}
	return e
}

// BySelector implements app.Enrolments.
func (s *Enrolments) BySelector(ctx context.Context, selector []byte) (app.Enrolment, error) {
	r, err := s.q.EnrolmentBySelector(ctx, s.db.Conn(ctx), selector)
	return enrolmentFrom(r), translate(err)
}

// ForUpdate implements app.Enrolments.
func (s *Enrolments) ForUpdate(ctx context.Context, tenant, id string) (app.Enrolment, error) {
	r, err := s.q.EnrolmentForUpdate(ctx, s.db.Conn(ctx), dbsqlc.EnrolmentForUpdateParams{TenantID: tenant, ID: id})
	return enrolmentFrom(r), translate(err)
}

// Decide implements app.Enrolments.
func (s *Enrolments) Decide(ctx context.Context, e app.Enrolment, by string) error {
	var key *string
	if e.KeyID != "" {
		key = &e.KeyID
	}
	return translate(s.q.EnrolmentDecide(ctx, s.db.Conn(ctx), dbsqlc.EnrolmentDecideParams{
		Status: e.Status, DecidedAt: e.DecidedAt, DecidedBy: &by, Note: e.Note, KeyID: key, TenantID: e.TenantID, ID: e.ID,
	}))
}

// Pending implements app.Enrolments: it takes the tenant's enrolment lock
// first.
func (s *Enrolments) Pending(ctx context.Context, tenant string, now time.Time) (int64, error) {
	if err := s.q.EnrolmentsLock(ctx, s.db.Conn(ctx), tenant); err != nil {
		return 0, err
	}
	return s.q.EnrolmentsPending(ctx, s.db.Conn(ctx), dbsqlc.EnrolmentsPendingParams{TenantID: tenant, Now: now})
}

// Abandon implements app.Enrolments.
func (s *Enrolments) Abandon(ctx context.Context, now time.Time, limit int) (int, error) {
	rows, err := s.q.EnrolmentsAbandon(ctx, s.db.Conn(ctx), dbsqlc.EnrolmentsAbandonParams{Now: now, MaxRows: int32(limit)})
	return len(rows), err
}
