package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// `oml mcp` serves MCP on stdio for harnesses that cannot speak HTTP: the
// MCP Go SDK's command transport lists the server's tools through it,
// calls one, and gets the server's refusals as the server gives them.
func TestStdioProxy(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := t.Context()
	cmd := exec.Command(bins.cli, "mcp")
	cmd.Env = s.cliEnv(s.AdminKey)
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	for _, want := range []string{"oml_remember", "oml_recall", "oml_events_tail", "whoami"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list through oml mcp lacks %s: %v", want, names)
		}
	}
	who, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil || who.IsError {
		t.Fatalf("whoami through oml mcp: %v %+v", err, who)
	}
	body, _ := json.Marshal(who.StructuredContent)
	if !strings.Contains(string(body), s.TenantID) {
		t.Fatalf("whoami: %s", body)
	}
	refused, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "oml_workarea_info", Arguments: map[string]any{"workarea": "universe.nowhere"}})
	if err != nil || !refused.IsError {
		t.Fatalf("a refusal through oml mcp: %v %+v", err, refused)
	}
	if body, _ := json.Marshal(refused.StructuredContent); !strings.Contains(string(body), `"access.not_found"`) {
		t.Fatalf("the refusal lost its type: %s", body)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "oml_promote", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "R1") {
		t.Fatalf("an unknown tool through oml mcp: %v", err)
	}
}

// The CLI takes the key from ~/.config/oml/config.toml when neither a flag
// nor OML_API_KEY gives one, and refuses a file others may read.
func TestCLIConfigFile(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "oml", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("# OML\nurl = \""+s.URL+"\"\napi_key = \""+s.AdminKey+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func() (string, error) {
		cmd := exec.Command(bins.cli, "whoami")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + dir}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(); err != nil || !strings.Contains(out, "admin") {
		t.Fatalf("whoami with the config file: %v\n%s", err, out)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(); err == nil || !strings.Contains(out, "chmod 600") {
		t.Fatalf("a world-readable config file was used: %v\n%s", err, out)
	}
}
