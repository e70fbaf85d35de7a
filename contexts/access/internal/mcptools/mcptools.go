// Package mcptools registers the access context's MCP tools:
// oml_workarea_info and whoami.
package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/wire"
	"github.com/omlhub/oml/platform/transport"
)

// Register adds the tools to t.
func Register(t *transport.Tools, svc *app.Service, guideURL string) {
	transport.Add(t, transport.ToolSpec{
		Name:  "oml_workarea_info",
		Title: "Workarea info",
		Description: "One workarea as this key may see it: id, derived path, status (development | committed | validated), " +
			"crew record, readable children and edges, and my_effective_verbs — the verbs this key's effective access " +
			"carries there, at permission_epoch. Unknown and unreadable workareas give the same access.not_found.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.WorkareaRef) (wire.WorkareaInfo, error) {
		info, err := svc.WorkareaInfo(ctx, in.Workarea)
		if err != nil {
			return wire.WorkareaInfo{}, err
		}
		return wire.ToWorkareaInfo(info), nil
	})

	transport.Add(t, transport.ToolSpec{
		Name:        "whoami",
		Title:       "Who am I",
		Description: "Report the calling identity (key, principal, role, tenant), its tenant's root workarea, and the URL of the agent guide.",
		ReadOnly:    true, Idempotent: true,
	}, func(ctx context.Context, _ struct{}) (wire.Whoami, error) {
		who, err := svc.Whoami(ctx)
		if err != nil {
			return wire.Whoami{}, err
		}
		return wire.ToWhoami(who, guideURL), nil
	})
}
