package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omlhub/oml/platform/buildinfo"
	"github.com/omlhub/oml/platform/errs"
)

// bearerTransport adds the API key to every MCP request. It also turns
// the server's typed HTTP refusals (401 before dispatch, an Origin or body
// limit refusal) into *APIError: the SDK would otherwise reduce them to a
// bare status text.
type bearerTransport struct {
	key  string
	next http.RoundTripper
}

func (t *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+t.key)
	resp, err := t.next.RoundTrip(r)
	// 405 is how a stateless server declines an SSE stream; the SDK expects it.
	if err != nil || resp.StatusCode < 400 || resp.StatusCode == http.StatusMethodNotAllowed {
		return resp, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var env errs.Envelope
	if json.Unmarshal(data, &env) == nil && env.Error.Code != "" {
		return nil, &APIError{Status: resp.StatusCode, Body: env.Error, RetryAfter: resp.Header.Get("Retry-After")}
	}
	// Not ours (a JSON-RPC error body, say): hand it to the SDK untouched.
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

// mcpSession connects to the server's /mcp endpoint with the key.
func (c *cli) mcpSession(ctx context.Context) (*mcp.ClientSession, error) {
	if c.key == "" {
		return nil, errNoKey
	}
	base, err := baseURL(c.url)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "oml-cli", Version: buildinfo.Read().Version}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:   base + "/mcp",
		HTTPClient: &http.Client{Transport: &bearerTransport{key: c.key, next: http.DefaultTransport}},
		// The server is stateless: it has no stream to offer (GET /mcp is 405).
		DisableStandaloneSSE: true,
	}
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, mcpError(base+"/mcp", err)
	}
	return cs, nil
}

// mcpError reduces the SDK's layered errors to what the user needs: the
// server's typed refusal, or the JSON-RPC error message (an unknown tool's
// R1 refusal), or the transport failure with the endpoint.
func mcpError(endpoint string, err error) error {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr
	}
	// A failed connection surfaces wrapped in a JSON-RPC error ("rejected
	// by transport"); name the endpoint and the network cause instead.
	var netErr net.Error
	if errors.As(err, &netErr) {
		return fmt.Errorf("MCP %s: %w", endpoint, netErr)
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return errors.New(rpcErr.Message)
	}
	return fmt.Errorf("MCP %s: %w", endpoint, err)
}

func (c *cli) tools(ctx context.Context, args []string) error {
	fs := c.flags("tools", "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	cs, err := c.mcpSession(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return mcpError(c.url+"/mcp", err)
		}
		tools = append(tools, tool)
	}
	if c.json {
		return printValue(c.stdout, tools)
	}
	for i, tool := range tools {
		if i > 0 {
			fmt.Fprintln(c.stdout)
		}
		fmt.Fprintln(c.stdout, tool.Name)
		if d, _, _ := strings.Cut(strings.TrimSpace(tool.Description), "\n"); d != "" {
			fmt.Fprintf(c.stdout, "  %s\n", d)
		}
		schema, err := json.MarshalIndent(tool.InputSchema, "  ", "  ")
		if err != nil {
			return fmt.Errorf("tool %s: encode inputSchema: %w", tool.Name, err)
		}
		fmt.Fprintf(c.stdout, "  inputSchema: %s\n", schema)
	}
	return nil
}

func (c *cli) call(ctx context.Context, args []string) error {
	fs := c.flags("call", "TOOL [JSON|-]")
	pos, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		fs.Usage()
		return errors.New("call: want a tool name and at most one JSON argument")
	}
	name := pos[0]
	arguments, err := c.toolArguments(pos[1:])
	if err != nil {
		return err
	}
	cs, err := c.mcpSession(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: arguments})
	if err != nil {
		return mcpError(c.url+"/mcp", err)
	}
	if res.IsError {
		if err := printResult(c.stderr, res); err != nil {
			return err
		}
		return toolError(name, res)
	}
	if c.json {
		return printValue(c.stdout, res)
	}
	return printResult(c.stdout, res)
}

// toolArguments reads the one JSON object of a call: from the argument,
// from stdin for "-", or {} when there is none.
func (c *cli) toolArguments(args []string) (json.RawMessage, error) {
	if len(args) == 0 {
		return json.RawMessage(`{}`), nil
	}
	data := []byte(args[0])
	if args[0] == "-" {
		var err error
		if data, err = io.ReadAll(c.stdin); err != nil {
			return nil, fmt.Errorf("call: read arguments from stdin: %w", err)
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("call: arguments must be a JSON object: %w", err)
	}
	if obj == nil {
		return nil, errors.New("call: arguments must be a JSON object, not null")
	}
	return json.RawMessage(bytes.TrimSpace(data)), nil
}

// printResult prints a tool result's structured content, or its text when
// it has none. OML mirrors the structured content as JSON text; that copy
// keeps the server's field order, so it is preferred when it is the same
// document.
func printResult(w io.Writer, res *mcp.CallToolResult) error {
	if res.StructuredContent != nil {
		if text, ok := sameJSONText(res); ok {
			var buf bytes.Buffer
			if err := json.Indent(&buf, []byte(text), "", "  "); err == nil {
				fmt.Fprintln(w, buf.String())
				return nil
			}
		}
		return printValue(w, res.StructuredContent)
	}
	for _, content := range res.Content {
		if text, ok := content.(*mcp.TextContent); ok {
			fmt.Fprintln(w, text.Text)
			continue
		}
		if err := printValue(w, content); err != nil {
			return err
		}
	}
	return nil
}

// toolError is the command's error for an isError result: the typed
// refusal {"error": {...}} when the server sent one.
func toolError(name string, res *mcp.CallToolResult) error {
	var env errs.Envelope
	if b, err := json.Marshal(res.StructuredContent); err == nil && json.Unmarshal(b, &env) == nil && env.Error.Code != "" {
		return fmt.Errorf("tool %s: %w", name, &APIError{Body: env.Error})
	}
	for _, content := range res.Content {
		if text, ok := content.(*mcp.TextContent); ok && text.Text != "" {
			return fmt.Errorf("tool %s failed: %s", name, text.Text)
		}
	}
	return fmt.Errorf("tool %s failed", name)
}

// sameJSONText returns the result's first text content when it encodes the
// same value as the structured content.
func sameJSONText(res *mcp.CallToolResult) (string, bool) {
	if len(res.Content) == 0 {
		return "", false
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", false
	}
	var fromText any
	if json.Unmarshal([]byte(text.Text), &fromText) != nil {
		return "", false
	}
	a, err1 := json.Marshal(fromText)
	b, err2 := json.Marshal(res.StructuredContent)
	return text.Text, err1 == nil && err2 == nil && bytes.Equal(a, b)
}
