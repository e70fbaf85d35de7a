package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text  string `json:"text" jsonschema:"what to echo"`
	Times int    `json:"times,omitempty"`
}

type echoOut struct {
	Echo string `json:"echo"`
	Len  int    `json:"len"`
}

// fakeMCP serves a stateless JSON-mode MCP server at /mcp, as oml-server
// does: bearer key required (401 envelope before dispatch), unknown tools
// refused with the R1 JSON-RPC error.
func fakeMCP(t *testing.T) string {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "fake-oml", Version: "test"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echo the text back.\nA second line that tools must not print."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return nil, echoOut{Echo: strings.Repeat(in.Text, max(in.Times, 1)), Len: len(in.Text)}, nil
		})
	server.AddTool(&mcp.Tool{Name: "refuse", Description: "Always refuses.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			body := `{"error":{"code":"access.denied","rule":"D7 effective access","message":"no write on wa_1","retryable":false}}`
			return &mcp.CallToolResult{
				IsError:           true,
				StructuredContent: json.RawMessage(body),
				Content:           []mcp.Content{&mcp.TextContent{Text: body}},
			}, nil
		})
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" && p.Name != "echo" && p.Name != "refuse" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Unknown tool: %s. This surface carries no promote verb (R1).", p.Name)}
			}
			return next(ctx, method, req)
		}
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})

	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"code":"auth.invalid_key","rule":"every call presents a bearer key","message":"unknown key","retryable":false}}`)
			return
		}
		handler.ServeHTTP(w, r)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestMCP(t *testing.T) {
	t.Parallel()
	url := fakeMCP(t)
	tests := []struct {
		name       string
		args       []string
		stdin      string
		key        string // default testKey
		wantOut    []string
		wantNotOut []string
		wantStderr string
		wantErr    string
	}{
		{
			name:    "call prints the structured content",
			args:    []string{"call", "echo", `{"text":"hi","times":2}`},
			wantOut: []string{"{\n  \"echo\": \"hihi\",\n  \"len\": 2\n}\n"},
		},
		{
			name:    "call reads arguments from stdin",
			args:    []string{"call", "echo", "-"},
			stdin:   ` {"text":"from stdin"} `,
			wantOut: []string{`"echo": "from stdin"`},
		},
		{
			name:    "call as JSON prints the whole result",
			args:    []string{"--json", "call", "echo", `{"text":"x"}`},
			wantOut: []string{`"structuredContent"`, `"content"`},
		},
		{
			name:       "tool error goes to stderr and fails",
			args:       []string{"call", "refuse"},
			wantStderr: `"code": "access.denied"`,
			wantErr:    "tool refuse: access.denied: no write on wa_1 (rule: D7 effective access)",
		},
		{
			name:    "unknown tool is the JSON-RPC message",
			args:    []string{"call", "oml_promote", `{}`},
			wantErr: "Unknown tool: oml_promote. This surface carries no promote verb (R1).",
		},
		{
			name:    "bad key is the typed refusal",
			args:    []string{"call", "echo", `{"text":"x"}`},
			key:     "wrong",
			wantErr: "auth.invalid_key: unknown key",
		},
		{
			name: "tools prints names, first lines and input schemas",
			args: []string{"tools"},
			wantOut: []string{
				"echo\n  Echo the text back.\n  inputSchema: {\n",
				`    "type": "object"`,
				"    \"properties\": {\n      \"text\": {\n",
				"refuse\n  Always refuses.\n",
			},
			wantNotOut: []string{"second line"},
		},
		{
			name:    "tools as JSON is the array",
			args:    []string{"--json", "tools"},
			wantOut: []string{"[\n  {\n", `"inputSchema"`, `"name": "refuse"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := envFor(url)
			if tc.key != "" {
				env["OML_API_KEY"] = tc.key
			}
			res := runCLI(t, env, tc.stdin, tc.args...)
			if tc.wantErr == "" && res.err != nil {
				t.Fatalf("err = %v (stderr %q)", res.err, res.stderr)
			}
			if tc.wantErr != "" && (res.err == nil || !strings.Contains(res.err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want it to contain %q", res.err, tc.wantErr)
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout does not contain %q:\n%s", want, res.stdout)
				}
			}
			for _, not := range tc.wantNotOut {
				if strings.Contains(res.stdout, not) {
					t.Errorf("stdout contains %q:\n%s", not, res.stdout)
				}
			}
			if !strings.Contains(res.stderr, tc.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", res.stderr, tc.wantStderr)
			}
		})
	}
}
