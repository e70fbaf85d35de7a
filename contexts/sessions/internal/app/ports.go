// Package app holds the sessions context's use cases: session_start
// (start, resume, adopt, fork), session_end, session_list and an admin's
// reassignment. It reaches the access context and the journal only
// through the ports declared here.
package app

import (
	"context"
	"errors"
	"time"

	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// ErrNotFound is what the repository returns for a missing row.
var ErrNotFound = errors.New("not found")

// Workarea is a workarea with the caller's scopes there (the access
// context).
type Workarea struct {
	ID     string
	IDPath string
	Reader bool
	Writer bool
	Admin  bool
}

// KeyAt is another key of the caller's tenant at one workarea.
type KeyAt struct {
	KeyID       string
	PrincipalID string
	Principal   string
	Role        string
	Writer      bool
}

// Access is the access context as the sessions context needs it.
type Access interface {
	// Workarea resolves ref (id or path) for the caller; one it holds
	// nothing on is access.not_found.
	Workarea(ctx context.Context, ref string) (Workarea, error)
	// Subtrees are where the caller holds s.
	Subtrees(ctx context.Context, s scope.Scope) (scope.Subtrees, error)
	// KeyAt resolves a key of the caller's tenant at a workarea id; an
	// unknown or foreign key is access.not_found.
	KeyAt(ctx context.Context, keyID, workareaID string) (KeyAt, error)
}

// Active is one key's active session in one workarea.
type Active struct {
	WorkareaID string
	SessionID  string
	SetAt      time.Time
}

// ListQuery selects sessions: inside the readable subtrees, optionally
// under one id path and of one status, with ids below After.
type ListQuery struct {
	TenantID string
	Readable scope.Subtrees
	Under    string
	Status   domain.Status
	After    string
	Limit    int
}

// Repository is the sessions context's storage. Reads "ForUpdate" lock
// the row for the caller's unit of work.
type Repository interface {
	// Owned lists a principal's sessions that are not pruned, the most
	// recently active first, at most limit.
	Owned(ctx context.Context, tenant, principal string, limit int) ([]string, error)
	// Insert stores a new session; false when (workarea, owner, name) is
	// already taken (a concurrent start won).
	Insert(ctx context.Context, s domain.Session) (bool, error)
	// Get reads a session without locking it.
	Get(ctx context.Context, tenant, id string) (domain.Session, error)
	GetForUpdate(ctx context.Context, tenant, id string) (domain.Session, error)
	ByOwnerNameForUpdate(ctx context.Context, tenant, workarea, principal, name string) (domain.Session, error)
	Update(ctx context.Context, s domain.Session) error
	List(ctx context.Context, q ListQuery) ([]domain.Session, error)
	// LatestOfOwner lists a principal's sessions in one workarea, most
	// recently active first.
	LatestOfOwner(ctx context.Context, tenant, workarea, principalID string, limit int) ([]domain.Session, error)

	SetActive(ctx context.Context, tenant, key, workarea, session string, at time.Time) error
	ActiveOf(ctx context.Context, tenant, key string) ([]Active, error)
	// ClearActive drops every key's pointer to session.
	ClearActive(ctx context.Context, tenant, session string) error
}

// Journal appends events in the caller's unit of work.
type Journal interface {
	Append(ctx context.Context, tenant string, e journal.Event) (journal.Appended, error)
}

// Transactor runs fn in one unit of work.
type Transactor interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}
