// Package mcptools registers the inbox context's MCP tools: the events
// tail and seed 002's feed and inbox tools. Decisions on approvals are
// HTTP only: no MCP tool decides (R1).
package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/wire"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/transport"
)

// Register adds the tools to t.
func Register(t *transport.Tools, svc *app.Service, idem idempotency.Doer) {
	transport.Add(t, transport.ToolSpec{
		Name:  "oml_events_tail",
		Title: "Events tail",
		Description: "Poll the journal for what happened in a workarea's subtree since you last looked: pass the " +
			"last seq you processed as after_seq (omit it to start at the newest; the answer's head_seq and " +
			"next_after_seq say where you are). Shows promotions, demotions, workarea changes and ratified edges " +
			"in what this key may read, and this key's own events; never another writer's held submission. Gaps " +
			"in seq are events you may not see. Continue from next_after_seq.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.TailIn) (wire.TailOut, error) {
		p, err := svc.Tail(ctx, in.Query())
		if err != nil {
			return wire.TailOut{}, err
		}
		return wire.ToTailOut(p), nil
	})
	registerInbox(t, svc, idem)
	registerBrief(t, svc)
	registerNotify(t, svc)
}
