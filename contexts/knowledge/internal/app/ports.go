// Package app holds the knowledge context's use cases: reading a page's
// promoted head (and the caller's own held versions), writing a version
// (submitted through admission, held until a different identity ratifies
// it), deleting and reverting by new versions, history and listings. It
// reaches other contexts and storage only through the ports declared
// here.
package app

import (
	"context"
	"errors"
	"time"

	"github.com/omlhub/oml/contexts/knowledge/internal/domain"
	"github.com/omlhub/oml/platform/scope"
)

// ErrNotFound is what a port returns for a missing row.
var ErrNotFound = errors.New("not found")

// Workarea is a workarea as the caller may use it (from the access
// context).
type Workarea struct {
	ID     string
	Path   string
	IDPath string
	Reader bool
	Writer bool
}

// Access is the access context as the knowledge context needs it.
type Access interface {
	// Workarea resolves ref (id or path) for the caller; one the caller
	// holds nothing on is access.not_found.
	Workarea(ctx context.Context, ref string) (Workarea, error)
	// Readable is where the caller may read.
	Readable(ctx context.Context) (scope.Subtrees, error)
}

// Submission is a page version to submit.
type Submission struct {
	WorkareaID  string
	Path        string
	Content     string // "" for a deletion's tombstone
	BaseVersion string // sha256:…, absent, or "" (last writer wins)
}

// HeadFilter selects live pages.
type HeadFilter struct {
	Within        scope.Subtrees
	Workareas     []string
	AfterWorkarea string
	AfterPath     string
	Prefix        string
	Limit         int
}

// Admission is the admission context: page versions are its claims of
// kind page. Submit prepares outside any unit of work, then commits the
// version and runs then in the same unit of work.
type Admission interface {
	Submit(ctx context.Context, s Submission, then func(ctx context.Context, v domain.Version) error) (domain.Version, error)
	// Head is a page's promoted head, a tombstone included (ErrNotFound).
	Head(ctx context.Context, tenant, workarea, path string) (domain.Version, error)
	// ByVersion is the newest promoted version with that hash (ErrNotFound).
	ByVersion(ctx context.Context, tenant, workarea, path, version string) (domain.Version, error)
	// Versions lists a page's versions in states, newest first, below
	// number before (0: none), author's only unless author is ""; texts
	// only withText.
	Versions(ctx context.Context, tenant, workarea, path string, states []string, author string, before, limit int, withText bool) ([]domain.Version, error)
	// Promoted lists a page's promoted versions, oldest first: artifact
	// ids and internal numbers only.
	Promoted(ctx context.Context, tenant, workarea, path string) ([]domain.Version, error)
	// Heads lists live pages.
	Heads(ctx context.Context, tenant string, f HeadFilter) ([]domain.Version, error)
}

// Meta is what the knowledge context keeps of a version.
type Meta struct {
	SourceSession string
	StaleAfter    *time.Time
}

// Repository is the knowledge context's storage.
type Repository interface {
	Insert(ctx context.Context, tenant string, v domain.Version, at time.Time) error
	Meta(ctx context.Context, tenant string, artifacts []string) (map[string]Meta, error)
	// StaleCandidates lists a workarea's versions past stale_after at now,
	// the longest overdue first, at most limit.
	StaleCandidates(ctx context.Context, tenant, workarea string, now time.Time, limit int) ([]StaleCandidate, error)
}

// StaleCandidate is a version past its stale_after.
type StaleCandidate struct {
	ArtifactID string
	Path       string
	StaleAfter time.Time
}
