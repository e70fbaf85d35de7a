// Package postgres is the knowledge context's storage: what a page
// version carries beside its text (the text and its review live in
// admission), over the knowledge schema.
package postgres

import (
	"context"
	"time"

	"github.com/omlhub/oml/contexts/knowledge/internal/app"
	"github.com/omlhub/oml/contexts/knowledge/internal/domain"
	"github.com/omlhub/oml/contexts/knowledge/internal/postgres/dbsqlc"
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

// Insert records a version's metadata, in the caller's unit of work.
func (r *Repository) Insert(ctx context.Context, tenant string, v domain.Version, at time.Time) error {
	var src *string
	if v.SourceSession != "" {
		src = &v.SourceSession
	}
	return r.q.VersionInsert(ctx, r.db.Conn(ctx), dbsqlc.VersionInsertParams{TenantID: tenant, ArtifactID: v.ArtifactID,
		WorkareaID: v.WorkareaID, Path: v.Path, SourceSession: src, StaleAfter: v.StaleAfter, CreatedAt: at})
}

// Meta reads the metadata of versions by artifact id.
func (r *Repository) Meta(ctx context.Context, tenant string, artifacts []string) (map[string]app.Meta, error) {
	rows, err := r.q.VersionsByIDs(ctx, r.db.Conn(ctx), dbsqlc.VersionsByIDsParams{TenantID: tenant, Ids: artifacts})
	if err != nil {
		return nil, err
	}
	out := make(map[string]app.Meta, len(rows))
	for _, row := range rows {
		m := app.Meta{StaleAfter: row.StaleAfter}
		if row.SourceSession != nil {
			m.SourceSession = *row.SourceSession
		}
		out[row.ArtifactID] = m
	}
	return out, nil
}

// StaleCandidates lists a workarea's versions past stale_after.
func (r *Repository) StaleCandidates(ctx context.Context, tenant, workarea string, now time.Time, limit int) ([]app.StaleCandidate, error) {
	rows, err := r.q.StaleCandidates(ctx, r.db.Conn(ctx), dbsqlc.StaleCandidatesParams{TenantID: tenant, WorkareaID: workarea, Now: &now,
		MaxRows: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]app.StaleCandidate, 0, len(rows))
	for _, row := range rows {
		if row.StaleAfter != nil {
			out = append(out, app.StaleCandidate{ArtifactID: row.ArtifactID, Path: row.Path, StaleAfter: *row.StaleAfter})
		}
	}
	return out, nil
}
