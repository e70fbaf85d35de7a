package transport

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A panic in a method other than tools/call is a JSON-RPC internal error,
// masked.
func TestRecoverPanicsOutsideToolCalls(t *testing.T) {
	t.Parallel()
	tools := newTools("oml", slog.New(slog.DiscardHandler), nil)
	h := tools.recoverPanics(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		panic("secret detail")
	})
	res, err := h(context.Background(), "resources/list", &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{}})
	var rpcErr *jsonrpc.Error
	if res != nil || !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || rpcErr.Message != "internal error; it has been logged" {
		t.Fatalf("got %v, %v", res, err)
	}
	res, err = h(context.Background(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x"}})
	if r, ok := res.(*mcp.CallToolResult); err != nil || !ok || !r.IsError {
		t.Fatalf("tools/call got %v, %v", res, err)
	}
}
