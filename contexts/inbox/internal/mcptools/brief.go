package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/wire"
	"github.com/omlhub/oml/platform/transport"
)

// registerBrief adds session_brief: a seed-002 session tool, served here
// because it reads the feed, its cursor and the inbox.
func registerBrief(t *transport.Tools, svc *app.Service) {
	transport.Add(t, transport.ToolSpec{
		Name:  "session_brief",
		Title: "Session brief",
		Description: "Brief yourself on a workarea in one call that moves no feed cursor: answers and decisions on your own " +
			"questions and approvals since your feed cursor (or your previous session's last activity), your previous " +
			"session's handoff note in full, and the other events of that window, items still waiting on someone " +
			"first. Entries are pointers cut to 200 characters; each section counts what it left out in more. Call " +
			"it before session_start.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.BriefIn) (wire.BriefOut, error) {
		b, err := svc.SessionBrief(ctx, in.Workarea)
		if err != nil {
			return wire.BriefOut{}, err
		}
		return wire.ToBriefOut(b), nil
	})
}
