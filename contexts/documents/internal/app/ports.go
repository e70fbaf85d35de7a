// Package app holds the documents context's use cases: publishing a
// document and its versions through admission (held until a different
// identity ratifies them), drafts its author alone sees, reads, listings
// and history, the public or password viewer, and comments. It reaches
// other contexts and storage only through the ports declared here.
package app

import (
	"context"
	"errors"
	"time"

	"github.com/omlhub/oml/contexts/documents/internal/domain"
)

// ErrNotFound is what a port returns for a missing row.
var ErrNotFound = errors.New("not found")

// Workarea is a workarea as the caller may use it.
type Workarea struct {
	ID     string
	Path   string
	IDPath string
	Status string // development | committed | validated
	Root   bool
	Reader bool
	Writer bool
}

// Access is the access context as the documents context needs it.
type Access interface {
	// Workarea resolves ref (id or path) for the caller; one the caller
	// holds nothing on is access.not_found.
	Workarea(ctx context.Context, ref string) (Workarea, error)
}

// Submission is a document version to submit.
type Submission struct {
	WorkareaID  string
	Key         string
	Content     string
	BaseVersion string
}

// Admission is the admission context: a document's versions are its
// claims of kind document. Submit prepares outside any unit of work,
// commits the version held and runs then in the same unit of work.
type Admission interface {
	Submit(ctx context.Context, s Submission, then func(ctx context.Context, v domain.Version) error) (domain.Version, error)
	// Head is the newest promoted version (ErrNotFound).
	Head(ctx context.Context, tenant, workarea, key string) (domain.Version, error)
	// ByVersion is the newest promoted version with that hash (ErrNotFound).
	ByVersion(ctx context.Context, tenant, workarea, key, version string) (domain.Version, error)
	// Promoted lists a document's promoted versions, oldest first:
	// artifact ids and internal numbers only.
	Promoted(ctx context.Context, tenant, workarea, key string) ([]domain.Version, error)
	// Versions lists versions in states, newest first, below revision
	// before (0: none), author's only unless author is ""; texts only
	// withText.
	Versions(ctx context.Context, tenant, workarea, key string, states []string, author string, before, limit int, withText bool) ([]domain.Version, error)
}

// Counts are a document's comments, total and unresolved.
type Counts struct{ Total, Open int }

// Repository is the documents context's storage; calls run in the unit
// of work ctx carries, when it carries one.
type Repository interface {
	Insert(ctx context.Context, d domain.Document) error
	Get(ctx context.Context, tenant, id string) (domain.Document, error)
	// ByID reads a document by id alone (the viewer's URL names no tenant).
	ByID(ctx context.Context, id string) (domain.Document, error)
	In(ctx context.Context, tenant, workarea, session, after string, limit int) ([]domain.Document, error)
	InsertMeta(ctx context.Context, tenant, document, artifact string, m domain.Meta, at time.Time) error
	Meta(ctx context.Context, tenant string, artifacts []string) (map[string]domain.Meta, error)
	PutDraft(ctx context.Context, tenant, document, principal, content string, at time.Time) error
	Draft(ctx context.Context, tenant, document, principal string) (string, error)
	InsertComment(ctx context.Context, c domain.Comment) error
	Comments(ctx context.Context, tenant, document string, limit int) ([]domain.Comment, error)
	CommentForUpdate(ctx context.Context, tenant, id string) (domain.Comment, error)
	Resolve(ctx context.Context, tenant, id string, at *time.Time, by string) error
	DeleteComment(ctx context.Context, tenant, id string) error
	Counts(ctx context.Context, tenant string, documents []string) (map[string]Counts, error)
}

// Transactor runs fn in one unit of work.
type Transactor interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}
