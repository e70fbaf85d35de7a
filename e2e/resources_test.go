package e2e

import (
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP resources (issue 15, seed 002 "Resources"): the bootstrap and the
// skill's files listed and read, the knowledge base's template listed, a
// forged cursor and a malformed kb URI invalid params, unknown URIs and
// missing pages resource-not-found; the bootstrap served without a key;
// the stdio proxy forwards all of it.
func TestResources(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	check := func(name string, cs *mcp.ClientSession) {
		t.Helper()
		ctx := t.Context()
		if init := cs.InitializeResult(); init == nil || init.Capabilities.Resources == nil || init.Capabilities.Extensions["io.modelcontextprotocol/skills"] == nil {
			t.Fatalf("%s: capabilities: %+v", name, init)
		}
		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		if strings.Join(uris, " ") != "oml://skill skill://oml/SKILL.md skill://oml/references/tools.md" || list.NextCursor != "" {
			t.Fatalf("%s: resources/list: %v %q", name, uris, list.NextCursor)
		}
		if page, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "oml://skill"}); err != nil || len(page.Resources) != 2 {
			t.Fatalf("%s: a page after the bootstrap: %+v %v", name, page, err)
		}
		_, err = cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "forged"})
		if code := rpcCode(err); code != jsonrpc.CodeInvalidParams {
			t.Fatalf("%s: a forged cursor: %v", name, err)
		}
		tmpl, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "oml://kb/{workarea}/{+path}" {
			t.Fatalf("%s: templates: %+v %v", name, tmpl, err)
		}
		boot, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "oml://skill"})
		if err != nil || !strings.Contains(boot.Contents[0].Text, s.URL+"/mcp") {
			t.Fatalf("%s: the bootstrap: %+v %v", name, boot, err)
		}
		tools, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://oml/references/tools.md"})
		if err != nil || !strings.Contains(tools.Contents[0].Text, "## brain_put") || !strings.Contains(tools.Contents[0].Text, "## oml_recall") {
			t.Fatalf("%s: the tools reference: %v", name, err)
		}
		// Both are -32602 since SEP-2164; the message tells them apart.
		for uri, want := range map[string]string{
			"oml://kb/" + tm.crew.ID + "/runbook%20notes.md": "not found",
			"oml://kb/" + tm.crew.ID:                         "names a workarea and a page",
			"oml://kb/" + tm.crew.ID + "/a/../b.md":          "one percent-encoded name",
			"oml://other":                                    "not found",
		} {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(strings.ToLower(err.Error()), want) {
				t.Errorf("%s: read %s: %v, want %q", name, uri, err, want)
			}
		}
	}
	check("http", s.mcpSession(t, tm.writer.Token, "2026-07-28"))

	cmd := exec.Command(bins.cli, "mcp")
	cmd.Env = s.cliEnv(tm.writer.Token)
	proxy, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	check("stdio proxy", proxy)

	// resources/list is inside the panic guard and the key's rate limit.
	limited := s.issueKey(t, "limited-1", "reader")
	decode[map[string]any](t, s.do(t, "PUT", "/v1/quotas", s.AdminKey, map[string]any{"key_id": limited.KeyID, "requests_per_minute": 2}), 200)
	lcs := s.mcpSession(t, limited.Token, "2026-07-28")
	var limitErr error
	for range 4 {
		if _, limitErr = lcs.ListResources(t.Context(), nil); limitErr != nil {
			break
		}
	}
	if limitErr == nil || !strings.Contains(limitErr.Error(), "limit.rate") {
		t.Fatalf("a limited key's resources/list: %v", limitErr)
	}

	resp, err := http.Get(s.URL + "/bootstrap/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "---\nname: oml\n") || !strings.Contains(string(body), s.URL) {
		t.Fatalf("GET /bootstrap/SKILL.md: %d %.200s", resp.StatusCode, body)
	}
}

// rpcCode is the JSON-RPC error code of err (0 when it is not one).
func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
