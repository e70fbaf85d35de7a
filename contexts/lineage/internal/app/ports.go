// Package app holds the lineage context's use cases: declared derivations
// and closures, edge proposals and their ratification through the serve
// ceremony, and the scoped graph read.
package app

import (
	"context"
	"errors"
	"time"

	"github.com/omlhub/oml/contexts/lineage/internal/domain"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// ErrNotFound and ErrConflict are what the repository returns for a
// missing row and a uniqueness clash.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// Workarea is a workarea with the caller's scopes there (the access context).
type Workarea struct {
	ID      string
	IDPath  string
	Status  string
	Reader  bool
	Propose bool
}

// Subtrees are where the caller holds one scope (the shared access
// vocabulary).
type Subtrees = scope.Subtrees

// QueueCount is what waits for one reviewer in one workarea.
type QueueCount struct {
	WorkareaID string
	Waiting    int // including Leased
	Leased     int // leased to a reviewer now
	Oldest     time.Time
}

// Access is the access context as lineage needs it.
type Access interface {
	Workarea(ctx context.Context, ref string) (Workarea, error)
	Subtrees(ctx context.Context, s scope.Scope) (Subtrees, error)
}

// Visibility is how the caller may see a claim in a graph.
type Visibility int

// The visibilities: absent (unknown, erased, or held by another writer:
// never shown, R3), body-less (promoted but outside the caller's read
// access: the id only), readable.
const (
	Absent Visibility = iota
	BodyLess
	Readable
)

// ClaimRef is a claim as the graph shows it.
type ClaimRef struct {
	ID             string
	ClaimKey       string
	Version        int
	Kind           string
	State          string
	WorkareaID     string
	WorkareaIDPath string
	Supersedes     string
	SimulationID   string // a simulation's row (D10), shown only to its audience
	Visibility     Visibility
}

// Claims is the admission context as lineage needs it.
type Claims interface {
	// Lookup classifies ids for the caller; unknown ids come back Absent.
	Lookup(ctx context.Context, ids []string) (map[string]ClaimRef, error)
	// Recent lists the newest claims readable by the caller under idPath.
	Recent(ctx context.Context, idPath string, limit int) ([]ClaimRef, error)
}

// Derivation is one declared derives_from.
type Derivation struct{ From, To string }

// Reads is the read log (the retrieval context's): every graph read is
// logged like a recall.
type Reads interface {
	GraphRead(ctx context.Context, r GraphRead) error
}

// GraphRead is one graph read as logged: who, where, a digest of the
// query, the claims returned.
type GraphRead struct {
	TenantID    string
	KeyID       string
	WorkareaID  string
	QuerySHA256 []byte
	Returned    []string
	Simulations []string // beside each returned id, its row's simulation ("" for none)
	At          time.Time
}

// Repository is lineage's storage.
type Repository interface {
	Declare(ctx context.Context, tenant, artifact string, targets []string, at time.Time) error
	Closure(ctx context.Context, tenant, artifact string, limit int) ([]string, error)
	// Closures returns the closures of many roots, at most limit members in
	// all, and how many members it returned.
	Closures(ctx context.Context, tenant string, roots []string, limit int) (map[string][]string, int, error)
	Parents(ctx context.Context, tenant, artifact string) ([]string, error)
	DerivationsTouching(ctx context.Context, tenant string, ids []string) ([]Derivation, error)

	EdgeInsert(ctx context.Context, e domain.Edge) error
	EdgeGetForUpdate(ctx context.Context, tenant, id string) (domain.Edge, error)
	// EdgeNextForReview locks (SKIP LOCKED) and leases the oldest pending
	// edge the reviewer may ratify.
	// Edges in skip are passed over.
	EdgeNextForReview(ctx context.Context, tenant, principal string, within Subtrees, skip []string, now, leaseUntil time.Time) (domain.Edge, error)
	// EdgesQueueCounts counts, per from-endpoint workarea, the pending
	// edges EdgeNextForReview could serve the reviewer (leased ones too).
	EdgesQueueCounts(ctx context.Context, tenant, principal string, within Subtrees, now time.Time) ([]QueueCount, error)
	// EdgeLeaseClear ends a pending edge's lease if it is still lease (a
	// released serve's own, never a newer one).
	EdgeLeaseClear(ctx context.Context, tenant, id string, lease time.Time) error
	EdgeDecide(ctx context.Context, e domain.Edge, by string) error
	ClaimEdgesTouching(ctx context.Context, tenant string, ids []string) ([]domain.Edge, error)
	WorkareaEdgesFrom(ctx context.Context, tenant, workarea string) ([]domain.Edge, error)
}

// Journal appends events in the caller's unit of work.
type Journal interface {
	Append(ctx context.Context, tenant string, e journal.Event) (journal.Appended, error)
}

// Transactor runs fn in one unit of work.
type Transactor interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}
