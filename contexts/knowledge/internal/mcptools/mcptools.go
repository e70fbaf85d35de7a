// Package mcptools registers the knowledge context's own MCP tools:
// brain_history and brain_revert (a knowledge-base page's versions).
// brain_get, brain_put, brain_list and brain_promote with store
// "project" are the sessions context's tools, which reach the knowledge
// base through their port; seed 002's brain_delete is HTTP only (R1:
// DELETE /v1/kb).
package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/knowledge/internal/app"
	"github.com/omlhub/oml/contexts/knowledge/internal/wire"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/textsafe"
	"github.com/omlhub/oml/platform/transport"
)

// Register adds the tools.
func Register(t *transport.Tools, svc *app.Service) {
	transport.Add(t, transport.ToolSpec{
		Name:  "brain_history",
		Title: "List a page's versions",
		Description: "List a knowledge-base page's promoted versions (store project), newest first, deletions included: " +
			"version (sha256:…), revision, author, size, promoted_at. brain_get with version reads one; brain_revert " +
			"writes one back. Needs reader access on the workarea.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.HistoryIn) (wire.HistoryOut, error) {
		if err := projectOnly(in.Store, "brain_history"); err != nil {
			return wire.HistoryOut{}, err
		}
		l, err := svc.History(ctx, in.Workarea, in.Path, in.Cursor, in.Limit)
		if err != nil {
			return wire.HistoryOut{}, err
		}
		return wire.ToHistory(l.WorkareaID, in.Path, l.Versions, l.Next), nil
	})

	transport.Add(t, transport.ToolSpec{
		Name:  "brain_revert",
		Title: "Write an earlier page version back",
		Description: "Write an earlier promoted version of a knowledge-base page back as a new version (a deleted page " +
			"comes back the same way). Like every page write it is held until an identity that did not write it " +
			"approves it; with if_version the page's promoted head must still be that version now and at promotion " +
			"(else knowledge.conflict ending current_version=…).",
	}, func(ctx context.Context, in wire.RevertIn) (wire.Page, error) {
		if err := projectOnly(in.Store, "brain_revert"); err != nil {
			return wire.Page{}, err
		}
		v, err := svc.Revert(ctx, in.Workarea, in.Path, in.Version, in.IfVersion)
		if err != nil {
			return wire.Page{}, err
		}
		return wire.ToPage(v, ""), nil
	})
}

func projectOnly(store, tool string) error {
	if store == "" || store == "project" {
		return nil
	}
	return errs.Invalid("store %q: %s works on the knowledge base (store \"project\"); a session brain keeps only its current values",
		textsafe.Clip(store, 64), tool)
}
