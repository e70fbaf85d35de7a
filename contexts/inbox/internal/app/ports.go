// Package app holds the inbox context's use cases: the events tail, the
// feed and inbox, and notifications.
// It reaches the journal and the access context only through the ports
// declared here.
package app

import (
	"context"
	"errors"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/domain"

	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// Workarea is a workarea with the caller's read access there (from the
// access context).
type Workarea struct {
	ID     string
	IDPath string
	Status string
	Reader bool
	Writer bool
	Admin  bool
}

// Access is the access context as the inbox needs it.
type Access interface {
	// Workarea resolves ref (id or path) for the caller; a workarea the
	// caller holds nothing on is access.not_found.
	Workarea(ctx context.Context, ref string) (Workarea, error)
	// WorkareasByIDs is Workarea for many ids in one read; ids the caller
	// holds nothing on (or unknown ones) are left out.
	WorkareasByIDs(ctx context.Context, ids []string) (map[string]Workarea, error)
	// Fence is the simulations whose rows the caller may read (D10).
	Fence(ctx context.Context) (scope.Fence, error)
}

// Enrolments is the access context as an enrolment request's decision
// needs it: admit (the request's token becomes a key with role and
// grants) or refuse, in the caller's unit of work.
type Enrolments interface {
	Decide(ctx context.Context, enrolment string, approve bool, role string, grants []EnrolGrant, note string) error
}

// EnrolGrant is one grant an approval gives the enrolled key.
type EnrolGrant struct{ Workarea, Scope string }

// Journal reads the per-tenant journal: the tail is a view of it, never a
// second log.
type Journal interface {
	Head(ctx context.Context, tenant string) (int64, error)
	After(ctx context.Context, tenant string, seq int64, limit int) ([]journal.Stored, error)
	// InWorkarea reads one workarea's events strictly between after and
	// before (0: unbounded), oldest first or newest first.
	InWorkarea(ctx context.Context, tenant, workarea string, after, before int64, limit int, newestFirst bool) ([]journal.Stored, error)
	// AppendSequenced records an event in the caller's unit of work and
	// chains it at once: the inbox stores its seq (feed positions).
	AppendSequenced(ctx context.Context, tenant string, e journal.Event) (journal.Sequenced, error)
}

// Wakes carries "something landed in a tenant's inbox or feed" across
// replicas: Notify in the writer's unit of work (delivered at its commit),
// Subscribe for a waiter (a wake-up, never the data: the waiter reads
// again).
type Wakes interface {
	Notify(ctx context.Context, tenant string) error
	Subscribe() (<-chan string, func())
}

// ErrNotFound is what the repository returns for a missing row.
var ErrNotFound = errors.New("not found")

// ItemFilter selects inbox items in cursor order.
type ItemFilter struct {
	TenantID string
	After    int64
	Status   string
	Asker    string
	IDPath   string // "" any workarea
	Limit    int
	// Newest reads newest first, below Before (0: no bound).
	Newest bool
	Before int64
}

// Repository is the inbox's storage; every write runs in the caller's
// unit of work.
type Repository interface {
	ItemInsert(ctx context.Context, it domain.Item) error
	ItemGet(ctx context.Context, tenant, id string) (domain.Item, error)
	ItemGetForUpdate(ctx context.Context, tenant, id string) (domain.Item, error)
	// ItemResolve closes an open item; false when it was no longer open.
	ItemResolve(ctx context.Context, it domain.Item) (bool, error)
	// OpenCount locks the (principal, workarea) pair for the rest of the
	// unit of work and counts its open items.
	OpenCount(ctx context.Context, tenant, principalID, workarea string) (int, error)
	// ItemsDue claims (SKIP LOCKED) open items past their deadline; tenant
	// "" claims across tenants.
	ItemsDue(ctx context.Context, tenant string, now time.Time, limit int) ([]domain.Item, error)
	// ItemsAfter lists items after f.After in cursor order, or with
	// f.Newest newest first below f.Before.
	ItemsAfter(ctx context.Context, f ItemFilter) ([]domain.Item, error)
	// CountEvent counts one more feed event in the workarea and returns
	// the total (locked until the unit of work ends).
	CountEvent(ctx context.Context, tenant, workarea string) (int64, error)
	CursorGet(ctx context.Context, tenant, principalID, workarea string) (int64, error)
	CursorSet(ctx context.Context, tenant, principalID, workarea string, seq int64, at time.Time) error
}

// Transactor runs fn in one unit of work.
type Transactor interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Limits are the inbox's configured caps.
type Limits struct {
	EventsPerWorkarea int64 // OML_EVENTS_PER_WORKAREA
	OpenMax           int   // OML_INBOX_OPEN_MAX
}

// Notices stores what the notification trailer has shown each principal:
// its attention cursor and its subscriptions. Every method runs in the
// caller's unit of work.
type Notices interface {
	// Probe reports, in one read, whether the principal has a resolved
	// item of its own above its attention cursor and whether it has any
	// subscription.
	Probe(ctx context.Context, tenant, principalID string) (attention, subscribed bool, err error)
	// AttentionLock returns the attention cursor (0 when never set),
	// locked for the rest of the unit of work.
	AttentionLock(ctx context.Context, tenant, principalID string, now time.Time) (int64, error)
	AttentionSet(ctx context.Context, tenant, principalID string, seq int64, now time.Time) error
	// ResolvedFor lists the principal's resolved items after seq, in
	// cursor order.
	ResolvedFor(ctx context.Context, tenant, principalID string, after int64, limit int) ([]domain.Item, error)
	SubscriptionInsert(ctx context.Context, s domain.Subscription) error
	// SubscriptionDelete removes the principal's own subscription; false
	// when there is none by that id.
	SubscriptionDelete(ctx context.Context, tenant, principalID, id string) (bool, error)
	// Subscriptions lists the principal's subscriptions; lock holds their
	// cursors for the rest of the unit of work.
	Subscriptions(ctx context.Context, tenant, principalID string, lock bool) ([]domain.Subscription, error)
	SubscriptionCursorSet(ctx context.Context, tenant, id string, seq int64) error
}

// Search is the retrieval context's search corpus: coordination records
// with a body are searchable by every reader of their workarea, from the
// unit of work that records them.
type Search interface {
	IndexEvent(ctx context.Context, tenant, id, workareaID, workareaIDPath, kind, actor, body string, at time.Time) error
}
