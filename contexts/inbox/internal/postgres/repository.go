// Package postgres is the inbox context's storage: inbox items, feed
// cursors and per-workarea feed counts over the inbox schema.
package postgres

import (
	"context"
	"encoding/json"
	"math"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/contexts/inbox/internal/postgres/dbsqlc"
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

func ptr(s string) *string {
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

// ItemInsert stores a new open item.
func (r *Repository) ItemInsert(ctx context.Context, it domain.Item) error {
	var opts []byte
	if it.Options != nil {
		var err error
		if opts, err = json.Marshal(it.Options); err != nil {
			return err
		}
	}
	return r.q.ItemInsert(ctx, r.conn(ctx), dbsqlc.ItemInsertParams{
		TenantID: it.TenantID, ID: it.ID, Kind: string(it.Kind), WorkareaID: it.WorkareaID, WorkareaIDPath: it.IDPath,
		AskerKeyID: it.AskerKeyID, AskerPrincipalID: it.AskerPrincipalID, AskerPrincipal: it.AskerPrincipal,
		Body: it.Body, Options: opts, CreatedAt: it.CreatedAt, ExpiresAt: it.ExpiresAt, OnExpiry: ptr(it.OnExpiry), Seq: it.Seq,
	})
}

// ItemGet reads one item.
func (r *Repository) ItemGet(ctx context.Context, tenant, id string) (domain.Item, error) {
	row, err := r.q.ItemGet(ctx, r.conn(ctx), dbsqlc.ItemGetParams{TenantID: tenant, ID: id})
	return itemFromRow(row), translate(err)
}

// ItemGetForUpdate reads and locks one item.
func (r *Repository) ItemGetForUpdate(ctx context.Context, tenant, id string) (domain.Item, error) {
	row, err := r.q.ItemGetForUpdate(ctx, r.conn(ctx), dbsqlc.ItemGetForUpdateParams{TenantID: tenant, ID: id})
	return itemFromRow(row), translate(err)
}

// ItemResolve closes an open item.
func (r *Repository) ItemResolve(ctx context.Context, it domain.Item) (bool, error) {
	n, err := r.q.ItemResolve(ctx, r.conn(ctx), dbsqlc.ItemResolveParams{
		Status: string(it.Status), ResolvedAt: it.ResolvedAt, ResolvedBy: ptr(it.ResolvedBy), ResolutionBody: &it.ResolutionBody,
		Expired: it.Expired, AnswerEventID: ptr(it.AnswerEventID), Seq: it.Seq, TenantID: it.TenantID, ID: it.ID,
	})
	return n == 1, err
}

// OpenCount locks the (principal, workarea) pair and counts its open items.
func (r *Repository) OpenCount(ctx context.Context, tenant, principalID, workarea string) (int, error) {
	if err := r.q.ItemsOpenLock(ctx, r.conn(ctx), dbsqlc.ItemsOpenLockParams{TenantID: tenant, AskerPrincipalID: principalID, WorkareaID: workarea}); err != nil {
		return 0, err
	}
	n, err := r.q.ItemsOpenCount(ctx, r.conn(ctx), dbsqlc.ItemsOpenCountParams{TenantID: tenant, AskerPrincipalID: principalID, WorkareaID: workarea})
	return int(n), err
}

// ItemsDue claims open items past their deadline.
func (r *Repository) ItemsDue(ctx context.Context, tenant string, now time.Time, limit int) ([]domain.Item, error) {
	rows, err := r.q.ItemsDueClaim(ctx, r.conn(ctx), dbsqlc.ItemsDueClaimParams{Now: &now, TenantID: tenant, MaxRows: int32(limit)})
	return itemsFromRows(rows), err
}

// ItemsAfter lists items in cursor order.
func (r *Repository) ItemsAfter(ctx context.Context, f app.ItemFilter) ([]domain.Item, error) {
	if f.Newest {
		before := f.Before
		if before <= 0 {
			before = math.MaxInt64
		}
		rows, err := r.q.ItemsNewest(ctx, r.conn(ctx), dbsqlc.ItemsNewestParams{
			TenantID: f.TenantID, AfterSeq: f.After, BeforeSeq: before, Status: f.Status, Asker: f.Asker, WorkareaIDPath: f.IDPath, MaxRows: int32(f.Limit),
		})
		return itemsFromRows(rows), err
	}
	rows, err := r.q.ItemsAfter(ctx, r.conn(ctx), dbsqlc.ItemsAfterParams{
		TenantID: f.TenantID, AfterSeq: f.After, Status: f.Status, Asker: f.Asker, WorkareaIDPath: f.IDPath, MaxRows: int32(f.Limit),
	})
	return itemsFromRows(rows), err
}

// CountEvent counts one more feed event in the workarea.
func (r *Repository) CountEvent(ctx context.Context, tenant, workarea string) (int64, error) {
	return r.q.WorkareaEventsIncrement(ctx, r.conn(ctx), dbsqlc.WorkareaEventsIncrementParams{TenantID: tenant, WorkareaID: workarea})
}

// CursorGet reads a feed cursor (0 when none is stored).
func (r *Repository) CursorGet(ctx context.Context, tenant, principalID, workarea string) (int64, error) {
	seq, err := r.q.FeedCursorGet(ctx, r.conn(ctx), dbsqlc.FeedCursorGetParams{TenantID: tenant, PrincipalID: principalID, WorkareaID: workarea})
	if pg.IsNoRows(err) {
		return 0, nil
	}
	return seq, err
}

// CursorSet stores a feed cursor.
func (r *Repository) CursorSet(ctx context.Context, tenant, principalID, workarea string, seq int64, at time.Time) error {
	return r.q.FeedCursorSet(ctx, r.conn(ctx), dbsqlc.FeedCursorSetParams{TenantID: tenant, PrincipalID: principalID, WorkareaID: workarea, Seq: seq, UpdatedAt: at})
}

func itemsFromRows(rows []dbsqlc.InboxItem) []domain.Item {
	out := make([]domain.Item, len(rows))
	for i, row := range rows {
		out[i] = itemFromRow(row)
	}
	return out
}

func itemFromRow(row dbsqlc.InboxItem) domain.Item {
	it := domain.Item{
		TenantID: row.TenantID, ID: row.ID, Kind: domain.Kind(row.Kind), WorkareaID: row.WorkareaID, IDPath: row.WorkareaIDPath,
		AskerKeyID: row.AskerKeyID, AskerPrincipalID: row.AskerPrincipalID, AskerPrincipal: row.AskerPrincipal,
		Body: row.Body, CreatedAt: row.CreatedAt.UTC(), ExpiresAt: row.ExpiresAt, OnExpiry: deref(row.OnExpiry),
		Status: domain.Status(row.Status), ResolvedAt: row.ResolvedAt, ResolvedBy: deref(row.ResolvedBy),
		ResolutionBody: deref(row.ResolutionBody), Expired: row.Expired, AnswerEventID: deref(row.AnswerEventID), Seq: row.Seq,
	}
	if len(row.Options) > 0 {
		_ = json.Unmarshal(row.Options, &it.Options) // stored by ItemInsert as a JSON array
	}
	return it
}

// OldestDue is the deadline of the open item due longest at now, now when
// none is (for /metrics).
func (r *Repository) OldestDue(ctx context.Context, now time.Time) (time.Time, error) {
	return r.q.ItemsOldestDue(ctx, r.conn(ctx), now)
}
