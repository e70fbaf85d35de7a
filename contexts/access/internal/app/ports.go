// Package app holds the access context's use cases: bootstrap, key
// authentication, workareas, keys, grants and effective access. It talks to
// storage and the journal only through the ports declared here.
package app

import (
	"context"
	"errors"
	"time"

	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/platform/journal"
)

// ErrNotFound and ErrConflict are what repositories return for a missing
// row and a uniqueness clash; the service turns them into typed refusals.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// Principal is an identity keys belong to.
type Principal struct {
	ID   string
	Name string
}

// Key is a key as listed (never its token).
type Key struct {
	ID        string
	Principal Principal
	Role      domain.Role
	CreatedAt time.Time
	RevokedAt *time.Time
}

// KeyAuth is what authentication reads for a selector.
type KeyAuth struct {
	TenantID string
	Key      Key
	Verifier []byte
}

// Access is a key's access as of one snapshot: the permission epoch, the
// key's revocation and its live grants.
type Access struct {
	Epoch   int64
	Revoked bool
	// Ban is the reason of the key's principal's live ban; nil when it is
	// not banned.
	Ban    *string
	Grants []domain.GrantAt
}

// Grant is one grant row.
type Grant struct {
	ID         string
	KeyID      string
	WorkareaID string
	Scope      domain.Scope
	Effect     domain.Effect
	CreatedAt  time.Time
	RemovedAt  *time.Time
}

// ListedGrant is a grant as an admin lists it.
type ListedGrant struct {
	Grant
	Principal    string
	WorkareaPath string
	KeyRevoked   bool
	// The permission epochs it took and lost effect at (nil: unknown, or
	// not removed).
	CreatedEpoch, RemovedEpoch *int64
}

// GrantFilter selects grants: of one key and/or on one workarea, live now
// (AtEpoch < 0) or in force at AtEpoch, after the grant AfterID.
type GrantFilter struct {
	KeyID, WorkareaID string
	AtEpoch           int64
	AfterID           string
	Limit             int
}

// Repository is the access context's storage. Calls run in the unit of
// work carried by ctx when there is one.
type Repository interface {
	TenantCreate(ctx context.Context, id, name string) error
	EpochGet(ctx context.Context, tenant string) (int64, error)
	EpochBump(ctx context.Context, tenant string) (int64, error)

	PrincipalEnsure(ctx context.Context, tenant, name string) (Principal, error)

	KeyCreate(ctx context.Context, tenant string, k Key, selector, verifier []byte, createdBy string) error
	KeyBySelector(ctx context.Context, selector []byte) (KeyAuth, error)
	KeyGet(ctx context.Context, tenant, id string) (Key, error)
	KeyList(ctx context.Context, tenant string) ([]Key, error)
	KeyRevoke(ctx context.Context, tenant, id string, at time.Time) (bool, error)
	// KeyStampRevokedEpoch records the epoch a key's revocation bumped.
	KeyStampRevokedEpoch(ctx context.Context, tenant, id string, epoch int64) error

	// QuotaSet sets the tenant's writes a minute (keyID "") or a key's
	// requests a minute; 0 clears it.
	QuotaSet(ctx context.Context, tenant, keyID string, perMinute int, at time.Time, by string) error
	QuotasOf(ctx context.Context, tenant string) (Quotas, error)

	WebCredentialCreate(ctx context.Context, c WebCredential, selector []byte) error
	// WebCredentialBySelector loads a credential with the key it acts as
	// (ErrNotFound if none).
	WebCredentialBySelector(ctx context.Context, selector []byte) (WebCredential, error)
	// WebCredentialEnd ends a live, unexpired credential at at; false when
	// it was not (already ended or expired).
	WebCredentialEnd(ctx context.Context, tenant, id string, at time.Time) (bool, error)
	// WebCredentialsEndForKey ends every live credential of a key.
	WebCredentialsEndForKey(ctx context.Context, tenant, keyID string, at time.Time) (int64, error)
	// WebCredentialsPurge deletes up to limit credentials that ended or
	// expired before cutoff.
	WebCredentialsPurge(ctx context.Context, cutoff time.Time, limit int) (int64, error)

	WorkareaCreate(ctx context.Context, tenant string, w domain.Workarea) error
	WorkareaGet(ctx context.Context, tenant, id string) (domain.Workarea, error)
	// WorkareasGet loads the tenant's nodes among ids (unknown ids are
	// left out).
	WorkareasGet(ctx context.Context, tenant string, ids []string) ([]domain.Workarea, error)
	WorkareaByPath(ctx context.Context, tenant, path string) (domain.Workarea, error)
	WorkareaChildren(ctx context.Context, tenant, id string) ([]domain.Workarea, error)
	// WorkareasReadable lists up to limit workareas inside the allow
	// subtrees (id paths) and outside the deny ones, parents before
	// children, after the workarea afterID ("" from the start).
	WorkareasReadable(ctx context.Context, tenant string, allow, deny []string, afterID string, limit int) ([]domain.Workarea, error)
	// WorkareaUpdate loads the row for update, applies fn and stores it.
	WorkareaUpdate(ctx context.Context, tenant, id string, fn func(*domain.Workarea) error) (domain.Workarea, error)

	// GrantCreate inserts g unless an identical live grant exists; it
	// returns the live grant's id and whether it was created.
	GrantCreate(ctx context.Context, tenant string, g Grant, createdBy string) (string, bool, error)
	GrantGet(ctx context.Context, tenant, id string) (Grant, error)
	GrantRemove(ctx context.Context, tenant, id, by string, at time.Time) (bool, error)
	// GrantStampEpoch records the epoch a grant took effect at, or with
	// removed the epoch it lost it at.
	GrantStampEpoch(ctx context.Context, tenant, id string, epoch int64, removed bool) error
	// GrantsList lists grants by f, in id order, with their keys'
	// principals and their workareas' paths.
	GrantsList(ctx context.Context, tenant string, f GrantFilter) ([]ListedGrant, error)
	// AccessOf reads the key's epoch, revocation, its principal's live ban
	// and its grants in one snapshot.
	AccessOf(ctx context.Context, tenant, keyID string) (Access, error)
	// AccessAt is AccessOf and, in the same snapshot, the tenant's
	// workarea with id byID or path byPath (one of them empty); found is
	// false when there is none.
	AccessAt(ctx context.Context, tenant, keyID, byID, byPath string) (a Access, w domain.Workarea, found bool, err error)

	// WorkareaPaths maps ids of the tenant's workareas to their paths.
	WorkareaPaths(ctx context.Context, tenant string, ids []string) (map[string]string, error)

	PrincipalByName(ctx context.Context, tenant, name string) (Principal, error)
	BanCreate(ctx context.Context, tenant string, b Ban) error
	// BanLift lifts a live ban and returns it (ErrNotFound if none).
	BanLift(ctx context.Context, tenant, id, by string, at time.Time) (Ban, error)
	BanList(ctx context.Context, tenant string) ([]Ban, error)
}

// Ban refuses a principal's submissions at admission.
type Ban struct {
	ID        string
	Principal Principal
	Reason    string
	CreatedBy string
	CreatedAt time.Time
	LiftedAt  *time.Time
}

// Journal appends events in the caller's unit of work and verifies chains.
type Journal interface {
	Append(ctx context.Context, tenant string, e journal.Event) (journal.Appended, error)
	Verify(ctx context.Context, tenant string) (journal.Report, error)
}

// WorkareaEdge is an edge out of a workarea (the lineage context).
type WorkareaEdge struct {
	Label    string
	To       string
	ToIDPath string
	State    string
}

// Edges is the lineage context as access needs it: a workarea's live
// outgoing edges, which access filters to what the caller may read.
type Edges interface {
	From(ctx context.Context, tenant, workarea string) ([]WorkareaEdge, error)
}

// Transactor runs fn in one unit of work.
type Transactor interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}
