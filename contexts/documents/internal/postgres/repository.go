// Package postgres is the documents context's storage over the documents
// schema: documents, what each version carries beside its text (the text
// and its review live in admission), drafts and comments.
package postgres

import (
	"context"
	"time"

	"github.com/omlhub/oml/contexts/documents/internal/app"
	"github.com/omlhub/oml/contexts/documents/internal/domain"
	"github.com/omlhub/oml/contexts/documents/internal/postgres/dbsqlc"
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

func document(row dbsqlc.DocumentGetRow) domain.Document {
	return domain.Document{TenantID: row.TenantID, ID: row.ID, WorkareaID: row.WorkareaID, WorkareaIDPath: row.WorkareaIDPath,
		Format: row.Format, Visibility: row.Visibility, PasswordSalt: row.PasswordSalt, PasswordHash: row.PasswordHash,
		ActorPrincipal: row.ActorPrincipal, ActorKeyID: row.ActorKeyID, SessionID: deref(row.SessionID), CreatedAt: row.CreatedAt}
}

// Insert stores a new document.
func (r *Repository) Insert(ctx context.Context, d domain.Document) error {
	return r.q.DocumentInsert(ctx, r.conn(ctx), dbsqlc.DocumentInsertParams{TenantID: d.TenantID, ID: d.ID, WorkareaID: d.WorkareaID,
		WorkareaIDPath: d.WorkareaIDPath, Format: d.Format, Visibility: d.Visibility, PasswordSalt: d.PasswordSalt,
		PasswordHash: d.PasswordHash, ActorPrincipal: d.ActorPrincipal, ActorKeyID: d.ActorKeyID, SessionID: optional(d.SessionID),
		CreatedAt: d.CreatedAt})
}

// Get reads a document of a tenant.
func (r *Repository) Get(ctx context.Context, tenant, id string) (domain.Document, error) {
	row, err := r.q.DocumentGet(ctx, r.conn(ctx), dbsqlc.DocumentGetParams{TenantID: tenant, ID: id})
	return document(row), translate(err)
}

// ByID reads a document by id alone.
func (r *Repository) ByID(ctx context.Context, id string) (domain.Document, error) {
	row, err := r.q.DocumentByID(ctx, r.conn(ctx), id)
	return document(dbsqlc.DocumentGetRow(row)), translate(err)
}

// In lists a workarea's documents after a cursor.
func (r *Repository) In(ctx context.Context, tenant, workarea, session, after string, limit int) ([]domain.Document, error) {
	rows, err := r.q.DocumentsIn(ctx, r.conn(ctx), dbsqlc.DocumentsInParams{TenantID: tenant, WorkareaID: workarea, After: after,
		SessionID: optional(session), MaxRows: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]domain.Document, len(rows))
	for i, row := range rows {
		out[i] = document(dbsqlc.DocumentGetRow(row))
	}
	return out, nil
}

// InsertMeta records a version's title, description and label.
func (r *Repository) InsertMeta(ctx context.Context, tenant, document, artifact string, m domain.Meta, at time.Time) error {
	return r.q.VersionInsert(ctx, r.conn(ctx), dbsqlc.VersionInsertParams{TenantID: tenant, DocumentID: document, ArtifactID: artifact,
		Title: m.Title, Description: m.Description, Label: m.Label, CreatedAt: at})
}

// Meta reads versions' metadata by artifact id.
func (r *Repository) Meta(ctx context.Context, tenant string, artifacts []string) (map[string]domain.Meta, error) {
	rows, err := r.q.VersionsByArtifacts(ctx, r.conn(ctx), dbsqlc.VersionsByArtifactsParams{TenantID: tenant, Ids: artifacts})
	if err != nil {
		return nil, err
	}
	out := make(map[string]domain.Meta, len(rows))
	for _, row := range rows {
		out[row.ArtifactID] = domain.Meta{Title: row.Title, Description: row.Description, Label: row.Label}
	}
	return out, nil
}

// PutDraft stores a principal's draft of a document.
func (r *Repository) PutDraft(ctx context.Context, tenant, document, principal, content string, at time.Time) error {
	return r.q.DraftUpsert(ctx, r.conn(ctx), dbsqlc.DraftUpsertParams{TenantID: tenant, DocumentID: document, PrincipalID: principal,
		Content: content, UpdatedAt: at})
}

// Draft reads a principal's draft of a document.
func (r *Repository) Draft(ctx context.Context, tenant, document, principal string) (string, error) {
	row, err := r.q.DraftGet(ctx, r.conn(ctx), dbsqlc.DraftGetParams{TenantID: tenant, DocumentID: document, PrincipalID: principal})
	return row.Content, translate(err)
}

func comment(row dbsqlc.DocumentsComment) domain.Comment {
	c := domain.Comment{TenantID: row.TenantID, ID: row.ID, DocumentID: row.DocumentID, Revision: int(row.Revision),
		AuthorPrincipal: row.AuthorPrincipal, AuthorKeyID: row.AuthorKeyID, Body: row.Body, AnchorQuote: deref(row.AnchorQuote),
		DeleteTokenHash: row.DeleteTokenHash, ResolvedAt: row.ResolvedAt, ResolvedBy: deref(row.ResolvedBy), CreatedAt: row.CreatedAt}
	if row.AnchorOffset != nil {
		o := int(*row.AnchorOffset)
		c.AnchorOffset = &o
	}
	return c
}

// InsertComment stores a comment.
func (r *Repository) InsertComment(ctx context.Context, c domain.Comment) error {
	var offset *int32
	if c.AnchorOffset != nil {
		o := int32(*c.AnchorOffset)
		offset = &o
	}
	return r.q.CommentInsert(ctx, r.conn(ctx), dbsqlc.CommentInsertParams{TenantID: c.TenantID, ID: c.ID, DocumentID: c.DocumentID,
		Revision: int32(c.Revision), AuthorPrincipal: c.AuthorPrincipal, AuthorKeyID: c.AuthorKeyID, Body: c.Body,
		AnchorOffset: offset, AnchorQuote: optional(c.AnchorQuote), DeleteTokenHash: c.DeleteTokenHash, CreatedAt: c.CreatedAt})
}

// Comments lists a document's comments, oldest first.
func (r *Repository) Comments(ctx context.Context, tenant, document string, limit int) ([]domain.Comment, error) {
	rows, err := r.q.CommentsOf(ctx, r.conn(ctx), dbsqlc.CommentsOfParams{TenantID: tenant, DocumentID: document, MaxRows: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]domain.Comment, len(rows))
	for i, row := range rows {
		out[i] = comment(row)
	}
	return out, nil
}

// CommentForUpdate locks and reads a comment.
func (r *Repository) CommentForUpdate(ctx context.Context, tenant, id string) (domain.Comment, error) {
	row, err := r.q.CommentGetForUpdate(ctx, r.conn(ctx), dbsqlc.CommentGetForUpdateParams{TenantID: tenant, ID: id})
	return comment(row), translate(err)
}

// Resolve marks a comment resolved (at, by) or open (nil, "").
func (r *Repository) Resolve(ctx context.Context, tenant, id string, at *time.Time, by string) error {
	return r.q.CommentResolve(ctx, r.conn(ctx), dbsqlc.CommentResolveParams{TenantID: tenant, ID: id, ResolvedAt: at, ResolvedBy: optional(by)})
}

// DeleteComment deletes a comment.
func (r *Repository) DeleteComment(ctx context.Context, tenant, id string) error {
	return r.q.CommentDelete(ctx, r.conn(ctx), dbsqlc.CommentDeleteParams{TenantID: tenant, ID: id})
}

// Counts counts comments per document.
func (r *Repository) Counts(ctx context.Context, tenant string, documents []string) (map[string]app.Counts, error) {
	rows, err := r.q.CommentCounts(ctx, r.conn(ctx), dbsqlc.CommentCountsParams{TenantID: tenant, Ids: documents})
	if err != nil {
		return nil, err
	}
	out := make(map[string]app.Counts, len(rows))
	for _, row := range rows {
		out[row.DocumentID] = app.Counts{Total: int(row.Total), Open: int(row.Open)}
	}
	return out, nil
}
