package postgres

import (
	"context"

	"github.com/omlhub/oml/contexts/sessions/internal/app"
	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/contexts/sessions/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/pg"
)

// Brains implements app.Brains over sessions.brain_entries.
type Brains struct {
	db *pg.DB
	q  *dbsqlc.Queries
}

var _ app.Brains = (*Brains)(nil)

// NewBrains returns the brains' storage on db.
func NewBrains(db *pg.DB) *Brains { return &Brains{db: db, q: dbsqlc.New()} }

// Get implements app.Brains.
func (b *Brains) Get(ctx context.Context, tenant, session, path string) (domain.BrainEntry, error) {
	row, err := b.q.BrainGet(ctx, b.db.Conn(ctx), dbsqlc.BrainGetParams{TenantID: tenant, SessionID: session, Path: path})
	if err != nil {
		return domain.BrainEntry{}, translate(err)
	}
	return domain.BrainEntry{Path: row.Path, Content: row.Content, Version: row.Version, Size: row.SizeBytes, UpdatedAt: row.UpdatedAt}, nil
}

// Version implements app.Brains.
func (b *Brains) Version(ctx context.Context, tenant, session, path string) (string, error) {
	v, err := b.q.BrainVersion(ctx, b.db.Conn(ctx), dbsqlc.BrainVersionParams{TenantID: tenant, SessionID: session, Path: path})
	if pg.IsNoRows(err) {
		return "", nil
	}
	return v, err
}

// Put implements app.Brains.
func (b *Brains) Put(ctx context.Context, tenant, session string, e domain.BrainEntry, byKey string) error {
	return b.q.BrainPut(ctx, b.db.Conn(ctx), dbsqlc.BrainPutParams{
		TenantID: tenant, SessionID: session, Path: e.Path, Content: e.Content, Version: e.Version, UpdatedAt: e.UpdatedAt, UpdatedBy: byKey,
	})
}

// Delete implements app.Brains.
func (b *Brains) Delete(ctx context.Context, tenant, session, path string) (bool, error) {
	n, err := b.q.BrainDelete(ctx, b.db.Conn(ctx), dbsqlc.BrainDeleteParams{TenantID: tenant, SessionID: session, Path: path})
	return n > 0, err
}

// Usage implements app.Brains.
func (b *Brains) Usage(ctx context.Context, tenant, session, path string) (app.BrainUsage, error) {
	u, err := b.q.BrainUsage(ctx, b.db.Conn(ctx), dbsqlc.BrainUsageParams{TenantID: tenant, SessionID: session, Path: path})
	return app.BrainUsage{Entries: u.Entries, Bytes: u.Bytes, AtPath: u.AtPath}, err
}

// List implements app.Brains.
func (b *Brains) List(ctx context.Context, tenant, session, prefix, after string, limit int) ([]domain.BrainEntry, error) {
	rows, err := b.q.BrainList(ctx, b.db.Conn(ctx), dbsqlc.BrainListParams{
		TenantID: tenant, SessionID: session, Prefix: prefix, After: after, MaxRows: int32(limit),
	})
	if err != nil {
		return nil, err
	}
	out := make([]domain.BrainEntry, len(rows))
	for i, r := range rows {
		out[i] = domain.BrainEntry{Path: r.Path, Version: r.Version, Size: r.SizeBytes, UpdatedAt: r.UpdatedAt}
	}
	return out, nil
}

// Copy implements app.Brains.
func (b *Brains) Copy(ctx context.Context, tenant, from, to string) error {
	_, err := b.q.BrainCopy(ctx, b.db.Conn(ctx), dbsqlc.BrainCopyParams{TenantID: tenant, FromSession: from, ToSession: to})
	return err
}

// Drop implements app.Brains.
func (b *Brains) Drop(ctx context.Context, tenant, session string) error {
	_, err := b.q.BrainDrop(ctx, b.db.Conn(ctx), dbsqlc.BrainDropParams{TenantID: tenant, SessionID: session})
	return err
}
