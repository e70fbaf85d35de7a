package postgres

import (
	"context"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres/dbsqlc"
)

var _ app.SearchRepo = (*Repository)(nil)

// SearchPut makes a row searchable (or updates it).
func (r *Repository) SearchPut(ctx context.Context, row app.SearchRow) error {
	var session *string
	if row.SessionID != "" {
		session = &row.SessionID
	}
	return r.q.SearchRowUpsert(ctx, r.conn(ctx), dbsqlc.SearchRowUpsertParams{TenantID: row.TenantID, Corpus: row.Corpus, RowID: row.ID,
		WorkareaID: row.WorkareaID, WorkareaIDPath: row.WorkareaIDPath, SessionID: session, Title: row.Title, Body: row.Body,
		Actor: row.Actor, At: row.At})
}

// SearchDelete removes a row.
func (r *Repository) SearchDelete(ctx context.Context, tenant, corpus, id string) error {
	return r.q.SearchRowDelete(ctx, r.conn(ctx), dbsqlc.SearchRowDeleteParams{TenantID: tenant, Corpus: corpus, RowID: id})
}

// SearchDropSession removes a session's brain rows.
func (r *Repository) SearchDropSession(ctx context.Context, tenant, session string) error {
	return r.q.SearchRowsDropSession(ctx, r.conn(ctx), dbsqlc.SearchRowsDropSessionParams{TenantID: tenant, SessionID: &session})
}

// SearchCopySession copies a session's brain rows to another session.
func (r *Repository) SearchCopySession(ctx context.Context, tenant, from, to string) error {
	return r.q.SearchRowsCopySession(ctx, r.conn(ctx), dbsqlc.SearchRowsCopySessionParams{TenantID: tenant, FromSession: from, ToSession: to})
}

// Search ranks the rows the filter reaches.
func (r *Repository) Search(ctx context.Context, tenant, query string, f app.SearchFilter) ([]app.Found, error) {
	rows, err := r.q.Search(ctx, r.conn(ctx), dbsqlc.SearchParams{TenantID: tenant, Query: query, Allow: nonNil(f.Within.Allow),
		Deny: nonNil(f.Within.Deny), Scope: f.Scope, Events: f.Events, Pages: f.Pages, Sessions: nonNil(f.Sessions),
		MaxRows: int32(f.Limit)})
	if err != nil {
		return nil, err
	}
	out := make([]app.Found, len(rows))
	for i, row := range rows {
		out[i] = app.Found{Corpus: row.Corpus, ID: row.RowID, WorkareaID: row.WorkareaID, Title: row.Title, Actor: row.Actor,
			At: row.At, Score: row.Rank}
		if row.SessionID != nil {
			out[i].SessionID = *row.SessionID
		}
	}
	return out, nil
}

// Snippets highlights the query in each row's text.
func (r *Repository) Snippets(ctx context.Context, tenant, query string, ids []string) (map[string]string, error) {
	rows, err := r.q.SearchSnippets(ctx, r.conn(ctx), dbsqlc.SearchSnippetsParams{TenantID: tenant, Query: query, Rows: ids})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, row := range rows {
		out[row.RowID] = row.Snippet
	}
	return out, nil
}

// SearchReparse re-parses up to 1,000 stale rows of a tenant.
func (r *Repository) SearchReparse(ctx context.Context, tenant string) (int, error) {
	n, err := r.q.SearchRowsReparse(ctx, r.conn(ctx), tenant)
	return int(n), err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
