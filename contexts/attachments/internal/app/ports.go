// Package app holds the attachments context's use cases: opening upload
// sessions, taking their parts in order from any replica, completing or
// aborting them, binding complete ones to claims, serving the bytes back
// to those who may read the claim, review material, expiry and shredding.
// Storage, the object store, the journal and the other contexts are
// reached through the ports declared here.
package app

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/omlhub/oml/contexts/attachments/internal/domain"
	"github.com/omlhub/oml/platform/journal"
)

// Errors the repository returns.
var (
	ErrNotFound = errors.New("not found")
	// ErrLeaseLost: the session's write lease is no longer this writer's.
	ErrLeaseLost = errors.New("upload lease lost")
)

// Blob is a stored object.
type Blob struct {
	TenantID   string
	SHA256     [32]byte
	Address    string
	ObjectKey  string
	Size       int64
	PartSize   int64
	PartWrites []int64
	WrappedKey []byte
	CreatedAt  time.Time
}

// Binding is content a claim carries.
type Binding struct {
	TenantID   string
	ArtifactID string
	SHA256     [32]byte
	SessionID  string
	MediaType  string
	Size       int64
}

// WrappedKey is one stored data key: a blob's, or (Session set) an upload
// session's that has not ended.
type WrappedKey struct {
	TenantID string
	SHA256   [32]byte
	Session  string
	Address  string
	Wrapped  []byte
}

// Doomed is an object or an abandoned multipart upload to remove.
type Doomed struct {
	ID          int64
	TenantID    string
	ObjectKey   string
	StoreUpload string
	// NotBefore is when the sweeper may act (a grace period for objects a
	// completion is still recording).
	NotBefore time.Time
}

// Repository is the context's storage. Calls run in the unit of work
// carried by ctx when there is one.
type Repository interface {
	SessionInsert(ctx context.Context, s domain.Session) error
	SessionGet(ctx context.Context, tenant, id string) (domain.Session, error)
	SessionsForBind(ctx context.Context, tenant string, ids []string) ([]domain.Session, error)
	OpenCount(ctx context.Context, tenant, keyID string, now time.Time) (int, error)
	// TenantLimit is the tenant's own size ceiling (ok false: none);
	// SetTenantLimit sets it, or clears it with 0.
	TenantLimit(ctx context.Context, tenant string) (maxBytes int64, ok bool, err error)
	SetTenantLimit(ctx context.Context, tenant string, maxBytes int64) error
	// Lease takes the write lease and the next seal attempt; ok is false
	// when the session is not open or another writer holds a live lease.
	Lease(ctx context.Context, tenant, id, token string, until, now time.Time) (domain.Session, bool, error)
	Release(ctx context.Context, tenant, id, token string) error
	// Progress records the session's progress and state and releases the
	// lease (ErrLeaseLost when it is no longer token's).
	Progress(ctx context.Context, s domain.Session, token string) error
	// SessionKeyForUpdate locks an open session under token's lease and
	// returns its wrapped key as stored now (ErrLeaseLost otherwise).
	SessionKeyForUpdate(ctx context.Context, tenant, id, token string) ([]byte, error)
	// Close ends an open session; ok is false when it was not open.
	Close(ctx context.Context, tenant, id string, state domain.State, reason string) (domain.Session, bool, error)
	ExpireDue(ctx context.Context, now time.Time, limit int) ([]domain.Session, error)

	LockAddress(ctx context.Context, tenant, address string) error
	BlobGet(ctx context.Context, tenant string, sha [32]byte) (Blob, error)
	BlobInsert(ctx context.Context, b Blob) error
	BlobDelete(ctx context.Context, tenant string, sha [32]byte) (Blob, error)
	BlobInUse(ctx context.Context, tenant string, sha [32]byte, now time.Time) (bool, error)
	BlobsUnused(ctx context.Context, now time.Time, limit int) ([]Blob, error)
	// SessionsScrub clears what ended sessions keep about shredded content.
	SessionsScrub(ctx context.Context, tenant string, sha [32]byte) error

	// SessionBind marks a complete session bound; false when it was bound
	// already.
	SessionBind(ctx context.Context, tenant, id string, at time.Time) (bool, error)
	BindingInsert(ctx context.Context, b Binding) error
	BindingGet(ctx context.Context, tenant, artifact string, sha [32]byte) (Binding, error)
	BindingsDelete(ctx context.Context, tenant, artifact string) ([][32]byte, error)
	BindingsList(ctx context.Context, tenant, artifact string) ([]Binding, error)

	DoomedInsert(ctx context.Context, d Doomed, at time.Time) (int64, error)
	// DoomedClaim takes due rows for this sweeper until until.
	DoomedClaim(ctx context.Context, now, until time.Time, limit int) ([]Doomed, error)
	DoomedDelete(ctx context.Context, id int64) error

	// BlobKeysAfter and SessionKeysAfter page the stored data keys in
	// (tenant, digest) and (tenant, id) order after a cursor (the zero
	// value starts); RewrapKey replaces one if it is still k.Wrapped
	// (false: it was shredded, closed or rewrapped meanwhile).
	BlobKeysAfter(ctx context.Context, after WrappedKey, limit int) ([]WrappedKey, error)
	SessionKeysAfter(ctx context.Context, after WrappedKey, limit int) ([]WrappedKey, error)
	RewrapKey(ctx context.Context, k WrappedKey, next []byte) (bool, error)
	// AddressSample is one stored address with its tenant and digest
	// (ok false: nothing stored yet).
	AddressSample(ctx context.Context) (tenant string, sha [32]byte, address string, ok bool, err error)
}

// Store is the object store (blobstore.Store).
type Store interface {
	Begin(ctx context.Context, key string) (string, error)
	// PutPart streams size bytes of part n; a body that fails or ends
	// short leaves no part behind.
	PutPart(ctx context.Context, key, upload string, n int, body io.Reader, size int64) (string, error)
	Complete(ctx context.Context, key, upload string, etags []string) error
	Abort(ctx context.Context, key, upload string) error
	ReadAt(ctx context.Context, key string, off, n int64) ([]byte, error)
	Size(ctx context.Context, key string) (int64, error)
	Delete(ctx context.Context, key string) error
}

// Access is the access context as attachments needs it.
type Access interface {
	// Writes reports whether the caller holds writer effective access on
	// any workarea.
	Writes(ctx context.Context) (bool, error)
	// AdministersTenant refuses, with the typed error, a caller that may
	// not administer its tenant.
	AdministersTenant(ctx context.Context) error
}

// Claims is the admission context as attachments needs it.
type Claims interface {
	// CanRead reports whether the caller may read the claim's content:
	// its author, a reviewer it is served to, or a reader of a promoted
	// claim's workarea.
	CanRead(ctx context.Context, artifact string) (bool, error)
}

// Journal appends events in the unit of work.
type Journal interface {
	Append(ctx context.Context, tenant string, e journal.Event) (journal.Appended, error)
}

// Transactor runs fn in a unit of work.
type Transactor interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}
