// Package mcptools registers oml_recall and search.
package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/wire"
	"github.com/omlhub/oml/platform/transport"
)

// Register adds the tool to t.
func Register(t *transport.Tools, svc *app.Service) {
	transport.Add(t, transport.ToolSpec{
		Name:  "oml_recall",
		Title: "Recall",
		Description: "Search promoted memories in a workarea's subtree (within this key's read access). Steering notes " +
			"of the scope, its ancestors and its subtree come first, unranked; then hits ranked by a fusion of " +
			"full-text and vector search. Held items, including your own, never appear (use oml_my_work).",
		ReadOnly: true,
	}, func(ctx context.Context, in wire.RecallIn) (wire.RecallOut, error) {
		res, err := svc.Recall(ctx, in.ToQuery())
		if err != nil {
			return wire.RecallOut{}, err
		}
		return wire.ToRecallOut(res), nil
	})
}

// RegisterSearch adds search (issue 15, seed 002).
func RegisterSearch(t *transport.Tools, svc *app.Service) {
	transport.Add(t, transport.ToolSpec{
		Name:  "search",
		Title: "Search",
		Description: "Full-text search over feed events (signals, questions, answers, approvals), promoted knowledge-base " +
			"pages, promoted documents and your own session brains, parsed as recall parses text: in a workarea's subtree, in one " +
			"of your sessions (session_id: its brain only), or everything this key may read. A hit is only ever a row " +
			"you may read: nobody's held version, nobody else's brain. For promoted memories use oml_recall.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.SearchIn) (wire.SearchOut, error) {
		hits, err := svc.Search(ctx, in.ToQuery())
		if err != nil {
			return wire.SearchOut{}, err
		}
		return wire.ToSearchOut(hits), nil
	})
}
