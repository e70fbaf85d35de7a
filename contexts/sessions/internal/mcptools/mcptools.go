// Package mcptools registers the sessions context's MCP tools:
// session_start, session_end and session_list. Reassignment is an admin's
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
