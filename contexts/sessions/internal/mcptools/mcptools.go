// Package mcptools registers the sessions context's MCP tools:
// session_start, session_end and session_list, and the brain tools. Reassignment is an admin's
// move and lives on the HTTP API (R1).
package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/sessions/internal/app"
	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/contexts/sessions/internal/wire"
	"github.com/omlhub/oml/platform/errs"
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
			"else's brain is readable: another agent's session answers as a missing one. With store project, read a page " +
			"of the workarea's knowledge base: its promoted head (your own versions waiting for review listed as own_held; " +
			"a page not yet promoted is yours alone, marked held), or a promoted version by version.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.BrainGetIn) (wire.BrainEntry, error) {
		if in.Store == domain.StoreProject {
			p, err := svc.PageGet(ctx, in.Ref(), in.Path, in.Version)
			if err != nil {
				return wire.BrainEntry{}, err
			}
			return wire.FromPage(p), nil
		}
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
			"current_version=…. Without it the last writer wins. With store project, submit a version of a knowledge-base " +
			"page (/fs/ only, at most 1 MiB, optional stale_after): like every shared write it is held until an identity " +
			"that did not write it approves it; if_version is checked against the promoted head now and again at promotion " +
			"(knowledge.conflict ending current_version=…). With from instead of content, copy that entry of your own " +
			"session brain (session, default the active one) into the page, which cites the session (seed 002's " +
			"brain_promote: R1 keeps a promote verb off this surface).",
		// Not idempotent: with store project every call submits a version.
	}, func(ctx context.Context, in wire.BrainPutIn) (wire.BrainPutOut, error) {
		ref := app.BrainRef{Store: in.Store, Session: in.Session, Workarea: in.Workarea}
		if in.Store == domain.StoreProject && in.From != "" {
			// Seed 002's brain_promote: R1 keeps the verb off the surface.
			if in.Content != nil {
				return wire.BrainPutOut{}, errs.Invalid("from copies an entry of your session brain: give from or content, not both")
			}
			p, err := svc.Promote(ctx, app.BrainRef{Store: domain.StoreSession, Session: in.Session, Workarea: in.Workarea}, in.From, in.Path, in.Workarea,
				in.IfVersion, in.StaleAfter)
			if err != nil {
				return wire.BrainPutOut{}, err
			}
			return wire.PutFromPage(p), nil
		}
		if in.From != "" {
			return wire.BrainPutOut{}, errs.Invalid("from is store \"project\"'s: it copies a session brain entry into a page")
		}
		if in.Content == nil {
			return wire.BrainPutOut{}, errs.Invalid("content is required (or, with store \"project\", from)")
		}
		if in.Store == domain.StoreProject {
			p, err := svc.PagePut(ctx, ref, app.PagePut{Path: in.Path, Content: *in.Content, IfVersion: in.IfVersion, StaleAfter: in.StaleAfter})
			if err != nil {
				return wire.BrainPutOut{}, err
			}
			return wire.PutFromPage(p), nil
		}
		if in.StaleAfter != nil {
			return wire.BrainPutOut{}, errs.Invalid("stale_after is a knowledge-base page's (store \"project\")")
		}
		s, e, created, err := svc.BrainPut(ctx, app.BrainRef{Store: in.Store, Session: in.Session, Workarea: in.Workarea}, in.Path, *in.Content, in.IfVersion)
		if err != nil {
			return wire.BrainPutOut{}, err
		}
		return wire.BrainPutOut{Store: in.Store, SessionID: s.ID, Path: e.Path, Version: e.Version, SizeBytes: e.Size, Created: created}, nil
	})

	transport.Add(t, transport.ToolSpec{
		Name:  "brain_list",
		Title: "List a brain",
		Description: "List your own session brain's entries (path, type, size, version), in path order, optionally under a " +
			"prefix; cursor-paginated. With store project, list the workarea knowledge base's promoted pages.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.BrainListIn) (wire.BrainListOut, error) {
		if in.Store == domain.StoreProject {
			l, err := svc.PageList(ctx, app.BrainRef{Store: in.Store, Session: in.Session, Workarea: in.Workarea}, in.Prefix, in.Cursor, in.Limit)
			if err != nil {
				return wire.BrainListOut{}, err
			}
			return wire.ListFromPages(l), nil
		}
		p, err := svc.BrainList(ctx, app.BrainRef{Store: in.Store, Session: in.Session, Workarea: in.Workarea}, in.Prefix, in.Cursor, in.Limit)
		if err != nil {
			return wire.BrainListOut{}, err
		}
		return wire.ToBrainList(p), nil
	})
}
