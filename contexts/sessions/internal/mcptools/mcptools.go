// Package mcptools registers the sessions context's MCP tools:
// session_start, session_end and session_list, and the brain tools. Reassignment is an admin's
// move and lives on the HTTP API (R1).
package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/sessions/internal/app"
	"github.com/omlhub/oml/contexts/sessions/internal/wire"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/transport"
)

// Register adds the tools to t.
func Register(t *transport.Tools, svc *app.Service, idem idempotency.Doer) {
	transport.Add(t, transport.ToolSpec{
		Name:  "session_start",
		Title: "Start or resume a session",
		Description: "Register or resume your own work session in a workarea by name (idempotent on the name: the " +
			"same name resumes the same session). Returns session_id, owner, status, the brain's namespaces, " +
			"recovery_path and the handoff note the previous owner left. With from (a session id) it picks another " +
			"agent's session up: an ended one is adopted (it becomes yours), a running one forked into a new session; " +
			"mode says which. Needs writer on the workarea. The session becomes this key's active one there.",
		Idempotent: true,
	}, func(ctx context.Context, in wire.StartIn) (wire.StartOut, error) {
		return wire.Start(ctx, svc, idem, in)
	})

	transport.Add(t, transport.ToolSpec{
		Name:  "session_end",
		Title: "End a session",
		Description: "End a session with an optional handoff note for whoever picks it up (session_start with from). " +
			"Only its owner or an admin of its workarea may end it. Without session_id it ends this key's active " +
			"session (in workarea, when this key has active sessions in several).",
	}, func(ctx context.Context, in wire.EndIn) (wire.Session, error) {
		s, err := svc.End(ctx, app.End{SessionID: in.SessionID, Workarea: in.Workarea, HandoffNote: in.HandoffNote})
		if err != nil {
			return wire.Session{}, err
		}
		return wire.ToSession(s), nil
	})

	transport.Add(t, transport.ToolSpec{
		Name:  "session_list",
		Title: "List sessions",
		Description: "Sessions with their owner, status, handoff note and lineage (adopted_from, forked_from), in " +
			"workareas this key may read, newest first. Cursor-paginated.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.ListIn) (wire.ListOut, error) {
		p, err := svc.List(ctx, in.Query())
		if err != nil {
			return wire.ListOut{}, err
		}
		return wire.ToListOut(p), nil
	})
}

// RegisterBrains adds brain_get, brain_put and brain_list: a session's
// private working state (issue 15), its owner's alone. Seed 002's
// brain_delete is not here: the MCP surface carries no delete verb (R1);
// the owner deletes an entry over HTTP (DELETE /v1/sessions/{id}/brain).
func RegisterBrains(t *transport.Tools, svc *app.Service) {
	transport.Add(t, transport.ToolSpec{
		Name:  "brain_get",
		Title: "Read a brain entry",
		Description: "Read a path (/fs/… or /kv/…) from your own session's brain: the active one, or one of yours named by " +
			"session. Returns the content and its version (sha256:…), which brain_put takes as if_version. Nobody " +
			"else's brain is readable: another agent's session answers as a missing one.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.BrainGetIn) (wire.BrainEntry, error) {
		s, e, err := svc.BrainGet(ctx, in.Ref(), in.Path, in.Version)
		if err != nil {
			return wire.BrainEntry{}, err
		}
		return wire.ToBrainEntry(s, e), nil
	})

	transport.Add(t, transport.ToolSpec{
		Name:  "brain_put",
		Title: "Write a brain entry",
		Description: "Write a path (/fs/… or /kv/…) into your own running session's brain; store is required (session). " +
			"One value is at most 4 MiB. With if_version the write applies only while the stored value still has that " +
			"version (absent: only where nothing is stored); otherwise it is refused with session.conflict ending " +
			"current_version=…. Without it the last writer wins. Knowledge for other agents belongs in reviewed memory " +
			"(oml_remember), not in a brain.",
		Idempotent: true,
	}, func(ctx context.Context, in wire.BrainPutIn) (wire.BrainPutOut, error) {
		s, e, created, err := svc.BrainPut(ctx, app.BrainRef{Store: in.Store, Session: in.Session, Workarea: in.Workarea}, in.Path, in.Content, in.IfVersion)
		if err != nil {
			return wire.BrainPutOut{}, err
		}
		return wire.BrainPutOut{Store: in.Store, SessionID: s.ID, Path: e.Path, Version: e.Version, SizeBytes: e.Size, Created: created}, nil
	})

	transport.Add(t, transport.ToolSpec{
		Name:  "brain_list",
		Title: "List a brain",
		Description: "List your own session brain's entries (path, type, size, version), in path order, optionally under a " +
			"prefix; cursor-paginated.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.BrainListIn) (wire.BrainListOut, error) {
		p, err := svc.BrainList(ctx, app.BrainRef{Store: in.Store, Session: in.Session, Workarea: in.Workarea}, in.Prefix, in.Cursor, in.Limit)
		if err != nil {
			return wire.BrainListOut{}, err
		}
		return wire.ToBrainList(p), nil
	})
}
