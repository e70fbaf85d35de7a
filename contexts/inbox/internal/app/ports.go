// Package app holds the inbox context's use cases: today the events tail.
// It reaches the journal and the access context only through the ports
// declared here.
package app

import (
	"context"

	"github.com/omlhub/oml/platform/journal"
)

// Workarea is a workarea with the caller's read access there (from the
// access context).
type Workarea struct {
	ID     string
	IDPath string
	Reader bool
}

// Access is the access context as the inbox needs it.
type Access interface {
	// Workarea resolves ref (id or path) for the caller; a workarea the
	// caller holds nothing on is access.not_found.
	Workarea(ctx context.Context, ref string) (Workarea, error)
	// WorkareasByIDs is Workarea for many ids in one read; ids the caller
	// holds nothing on (or unknown ones) are left out.
	WorkareasByIDs(ctx context.Context, ids []string) (map[string]Workarea, error)
}

// Journal reads the per-tenant journal: the tail is a view of it, never a
// second log.
type Journal interface {
	Head(ctx context.Context, tenant string) (int64, error)
	After(ctx context.Context, tenant string, seq int64, limit int) ([]journal.Stored, error)
}
