package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omlhub/oml/platform/buildinfo"
	"github.com/omlhub/oml/platform/errs"
)

// mcpProxy serves MCP on stdin/stdout and forwards every request to the
// server's /mcp with the key, for harnesses that speak stdio only. It is
// built on the SDK on both sides: the tools are the server's (listed once
// at start), each call is the server's answer, refusals included, and a
// call of a tool the server does not have gets the server's own R1
// refusal.
func (c *cli) mcpProxy(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("mcp takes no arguments (the server and key come from --url/--key, OML_URL/OML_API_KEY or %s)", configHint)
	}
	remote, err := c.mcpSession(ctx)
	if err != nil {
		return err
	}
	defer remote.Close()
	var tools []*mcp.Tool
	for t, err := range remote.Tools(ctx, nil) {
		if err != nil {
			return mcpError(c.url, err)
		}
		tools = append(tools, t)
	}
	// Tools and resources, as the server has them (the resources are
	// forwarded below, held to the key like everything else).
	opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}}
	if init := remote.InitializeResult(); init != nil {
		opts.Instructions = init.Instructions
		if init.Capabilities != nil {
			if init.Capabilities.Resources != nil {
				opts.Capabilities.Resources = &mcp.ResourceCapabilities{}
			}
			for name, v := range init.Capabilities.Extensions {
				settings, _ := v.(map[string]any)
				opts.Capabilities.AddExtension(name, settings)
			}
		}
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "oml", Title: "OML (stdio proxy)", Version: buildinfo.Read().Version}, opts)
	known := map[string]bool{}
	for _, t := range tools {
		known[t.Name] = true
		server.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
			defer recoverInto(&err)
			return forwardCall(ctx, remote, req.Params.Name, req.Params.Arguments)
		})
	}
	// A tool the server does not list is still the server's to refuse
	// (R1's message names the verb ceiling).
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer recoverInto(&err)
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" && !known[p.Name] {
				return forwardCall(ctx, remote, p.Name, p.Arguments)
			}
			// Resources are forwarded with fresh params: only the cursor
			// or the URI travel, not the local client's _meta.
			switch p := req.GetParams().(type) {
			case *mcp.ListResourcesParams:
				var cursor string
				if p != nil {
					cursor = p.Cursor
				}
				return remote.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			case *mcp.ListResourceTemplatesParams:
				var cursor string
				if p != nil {
					cursor = p.Cursor
				}
				return remote.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
			case *mcp.ReadResourceParams:
				if p == nil {
					break
				}
				return remote.ReadResource(ctx, &mcp.ReadResourceParams{URI: p.URI})
			}
			return next(ctx, method, req)
		}
	})
	err = server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(c.stdin), Writer: nopWriteCloser{c.stdout}})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// forwardCall calls the tool on the server and returns its result as it
// came; a JSON-RPC error (an unknown tool) goes back as that error.
func forwardCall(ctx context.Context, remote *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, error) {
	res, err := remote.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err == nil {
		return res, nil
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return nil, rpc
	}
	var api *APIError
	if errors.As(err, &api) {
		// The server refused before dispatch (a revoked key, say): the
		// typed refusal is the answer.
		return errorResult(errs.New(api.Body.Code, api.Body.Rule, "%s", api.Body.Message)), nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "oml mcp: " + err.Error()}
}

// errorResult is a typed refusal as an MCP tool result, the server's shape.
func errorResult(e *errs.Error) *mcp.CallToolResult {
	body, _ := json.Marshal(errs.Envelope{Error: e.Public()})
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: json.RawMessage(body)}
}

// recoverInto turns a panic in the proxy's handlers into a JSON-RPC
// internal error instead of ending the process.
func recoverInto(err *error) {
	if p := recover(); p != nil {
		*err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("oml mcp: internal error: %v\n%s", p, debug.Stack())}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
