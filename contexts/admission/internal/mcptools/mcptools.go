// Package mcptools registers the admission context's MCP tools:
// oml_remember, oml_learn and oml_my_work. Verdicts are not here: they live
// on the HTTP API behind the serve ceremony (R1, D14).
package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/admission/internal/app"
	"github.com/omlhub/oml/contexts/admission/internal/wire"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/transport"
)

// Register adds the tools to t.
func Register(t *transport.Tools, svc *app.Service, idem idempotency.Doer) {
	transport.Add(t, transport.ToolSpec{
		Name:  "oml_remember",
		Title: "Remember",
		Description: "Submit a memory. It is held on arrival: scanned, reviewed by an identity that did not write it, " +
			"and visible to others only after ratification. Success means accepted for review, never published. " +
			"Put a stable idempotency_key on every call your harness might retry: a retry with the same key " +
			"returns the first answer; without one it is refused as submission.claim_key_conflict.",
		// Not idempotentHint: only a call carrying an idempotency_key is
		// idempotent; a plain retry is a claim_key_conflict.
	}, func(ctx context.Context, in wire.RememberIn) (wire.RememberOut, error) {
		out, err := wire.Submit(ctx, svc, idem, wire.FromRemember(in), in.IdempotencyKey)
		if err != nil {
			return wire.RememberOut{}, err
		}
		return *out.Remember, nil
	})

	transport.Add(t, transport.ToolSpec{
		Name:  "oml_learn",
		Title: "Learn",
		Description: "Submit a derived fact with the lineage that produced it (derives_from must be non-empty; every " +
			"target must be readable by this key). Held on arrival and reviewed like oml_remember; a reviewer who " +
			"wrote anything in the lineage is never served it. Put a stable idempotency_key on every call your " +
			"harness might retry.",
		// Not idempotentHint, as for oml_remember.
	}, func(ctx context.Context, in wire.LearnIn) (wire.LearnOut, error) {
		out, err := wire.Submit(ctx, svc, idem, wire.FromLearn(in), in.IdempotencyKey)
		if err != nil {
			return wire.LearnOut{}, err
		}
		return *out.Learn, nil
	})

	transport.Add(t, transport.ToolSpec{
		Name:  "oml_my_work",
		Title: "My work",
		Description: "The caller's own submissions and where each stands (held, promoted, demoted, rejected, expired, " +
			"erased), newest first, with held_expires_at for held items. Cursor-paginated.",
		ReadOnly: true,
	}, func(ctx context.Context, in wire.MyWorkIn) (wire.MyWorkOut, error) {
		page, err := svc.MyWork(ctx, app.Mine{Workarea: in.Workarea, State: in.State, Limit: in.Limit, Cursor: in.Cursor})
		if err != nil {
			return wire.MyWorkOut{}, err
		}
		return wire.ToMyWork(page), nil
	})
}
