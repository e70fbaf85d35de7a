package postgres

import (
	"context"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/contexts/inbox/internal/postgres/dbsqlc"
)

var _ app.Notices = (*Repository)(nil)

// Probe implements app.Notices in one indexed read.
func (r *Repository) Probe(ctx context.Context, tenant, principalID string) (bool, bool, error) {
	row, err := r.q.NotifyProbe(ctx, r.conn(ctx), dbsqlc.NotifyProbeParams{TenantID: tenant, PrincipalID: principalID})
	return row.Attention, row.Subscribed, err
}

// AttentionLock implements app.Notices.
func (r *Repository) AttentionLock(ctx context.Context, tenant, principalID string, now time.Time) (int64, error) {
	if err := r.q.AttentionCursorEnsure(ctx, r.conn(ctx), dbsqlc.AttentionCursorEnsureParams{
		TenantID: tenant, PrincipalID: principalID, UpdatedAt: now}); err != nil {
		return 0, err
	}
	return r.q.AttentionCursorLock(ctx, r.conn(ctx), dbsqlc.AttentionCursorLockParams{TenantID: tenant, PrincipalID: principalID})
}

// AttentionSet implements app.Notices.
func (r *Repository) AttentionSet(ctx context.Context, tenant, principalID string, seq int64, now time.Time) error {
	return r.q.AttentionCursorSet(ctx, r.conn(ctx), dbsqlc.AttentionCursorSetParams{
		TenantID: tenant, PrincipalID: principalID, Seq: seq, UpdatedAt: now})
}

// ResolvedFor implements app.Notices.
func (r *Repository) ResolvedFor(ctx context.Context, tenant, principalID string, after int64, limit int) ([]domain.Item, error) {
	rows, err := r.q.ItemsResolvedForAsker(ctx, r.conn(ctx), dbsqlc.ItemsResolvedForAskerParams{
		TenantID: tenant, PrincipalID: principalID, AfterSeq: after, MaxRows: int32(limit)})
	return itemsFromRows(rows), err
}

// SubscriptionInsert implements app.Notices.
func (r *Repository) SubscriptionInsert(ctx context.Context, s domain.Subscription) error {
	return r.q.SubscriptionInsert(ctx, r.conn(ctx), dbsqlc.SubscriptionInsertParams{
		TenantID: s.TenantID, ID: s.ID, PrincipalID: s.PrincipalID, Kinds: s.Kinds,
		WorkareaID: ptr(s.WorkareaID), WorkareaIDPath: ptr(s.IDPath), Actor: ptr(s.Actor),
		DropOwn: s.DropOwn, Seq: s.Seq, CreatedAt: s.CreatedAt})
}

// SubscriptionDelete implements app.Notices.
func (r *Repository) SubscriptionDelete(ctx context.Context, tenant, principalID, id string) (bool, error) {
	n, err := r.q.SubscriptionDelete(ctx, r.conn(ctx), dbsqlc.SubscriptionDeleteParams{TenantID: tenant, PrincipalID: principalID, ID: id})
	return n > 0, err
}

// Subscriptions implements app.Notices.
func (r *Repository) Subscriptions(ctx context.Context, tenant, principalID string, lock bool) ([]domain.Subscription, error) {
	var (
		rows []dbsqlc.InboxSubscription
		err  error
	)
	if lock {
		rows, err = r.q.SubscriptionsByOwnerForUpdate(ctx, r.conn(ctx), dbsqlc.SubscriptionsByOwnerForUpdateParams{TenantID: tenant, PrincipalID: principalID})
	} else {
		rows, err = r.q.SubscriptionsByOwner(ctx, r.conn(ctx), dbsqlc.SubscriptionsByOwnerParams{TenantID: tenant, PrincipalID: principalID})
	}
	out := make([]domain.Subscription, len(rows))
	for i, row := range rows {
		out[i] = subscriptionFromRow(row)
	}
	return out, err
}

func subscriptionFromRow(row dbsqlc.InboxSubscription) domain.Subscription {
	return domain.Subscription{TenantID: row.TenantID, ID: row.ID, PrincipalID: row.PrincipalID, Kinds: row.Kinds,
		WorkareaID: deref(row.WorkareaID), IDPath: deref(row.WorkareaIDPath), Actor: deref(row.Actor),
		DropOwn: row.DropOwn, Seq: row.Seq, CreatedAt: row.CreatedAt.UTC()}
}

// SubscriptionCursorSet implements app.Notices.
func (r *Repository) SubscriptionCursorSet(ctx context.Context, tenant, id string, seq int64) error {
	return r.q.SubscriptionCursorSet(ctx, r.conn(ctx), dbsqlc.SubscriptionCursorSetParams{TenantID: tenant, ID: id, Seq: seq})
}
