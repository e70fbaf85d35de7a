package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Independent MCP clients, from npm, against the real oml-server: the
// official TypeScript SDK v1 client (2025-11-25 era) and v2 client
// (2026-07-28 era), the official conformance suite's server scenarios that
// apply to OML, and the Inspector CLI in both eras with --strict. They run
// on the Node and packages scripts/node.sh installs (make test calls it);
// without them the test fails, it never skips.

// conformanceScenarios are the server scenarios of
// @modelcontextprotocol/conformance that apply to OML. The suite has no
// protocol-version scenario; its one error-handling scenario,
// tools-call-error, calls a tool named test_error_handling that a
// production catalog does not have (the typed refusals are checked by the
// SDK clients and the Inspector instead). The rest need features OML does
// not offer (prompts, resources, completion, logging, sampling,
// elicitation, progress, SSE).
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection"}

// interop is what every client run needs.
type interop struct {
	node, dir string
	mcpURL    string // the server's /mcp
	proxyURL  string // a loopback proxy to it that adds the bearer key
	key       string
	kase      string // OML_CASE for checks.mjs
}

func TestInterop(t *testing.T) {
	t.Parallel()
	node, dir := os.Getenv("OML_NODE"), os.Getenv("OML_INTEROP_DIR")
	if node == "" || dir == "" {
		t.Fatal("OML_NODE and OML_INTEROP_DIR are not set: run `make test`, or `eval \"$(scripts/node.sh)\"` and export both")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol")); err != nil {
		t.Fatalf("the interop clients are not installed (%v): run scripts/node.sh", err)
	}

	// The conformance suite sends no key, so it talks to a proxy that adds
	// one; the proxy's origin is the one its DNS-rebinding scenario calls
	// valid, so the server accepts that origin.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxyURL := "http://" + ln.Addr().String()
	s := startServer(t, "OML_ALLOWED_ORIGINS="+proxyURL)
	tm := newTeam(t, s)
	hit := s.promote(t, tm, tm.crew.ID, "supplier-quote-am-7741", "",
		"Supplier Accra Metals quoted 412 USD/t for Q1-2027 delivery, valid until 2026-11-15.")
	// An operator key (admin on universe) and, per SDK era, a key that
	// may make 3 requests a minute, for the D9 and rate-limit checks.
	op := s.issueKey(t, "ops-interop", "operator")
	s.grant(t, op.KeyID, "universe", "admin", "allow")
	limited := map[string]string{}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		k := s.issueKey(t, "limited-"+era, "reader")
		s.grant(t, k.KeyID, "universe.procurement", "reader", "allow")
		if r := s.do(t, "PUT", "/v1/quotas", s.AdminKey, map[string]any{"key_id": k.KeyID, "requests_per_minute": 3}); r.Status != 200 {
			t.Fatalf("limit %s: %d %s", era, r.Status, r.Body)
		}
		limited[era] = k.Token
	}
	kase, _ := json.Marshal(map[string]any{
		"scope": tm.crew.ID, "query": "Accra Metals aluminium quote", "want_hit": hit,
		"missing_scope": "wa_01JB2ZZZZZZZZZZZZZZZZZZZZZ", "operator_key": op.Token, "limited_keys": limited,
	})
	in := interop{node: node, dir: dir, mcpURL: s.URL + "/mcp", proxyURL: proxyURL + "/mcp", key: tm.writer.Token, kase: string(kase)}
	in.serveProxy(t, ln, s.URL)

	t.Run("sdk-v1", func(t *testing.T) {
		t.Parallel()
		in.node_(t, 0, nil, filepath.Join(dir, "sdk-v1.mjs"))
	})
	t.Run("sdk-v2", func(t *testing.T) {
		t.Parallel()
		in.node_(t, 0, nil, filepath.Join(dir, "sdk-v2.mjs"))
	})
	t.Run("conformance", func(t *testing.T) {
		t.Parallel()
		suite := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
		for _, sc := range conformanceScenarios {
			out := in.node_(t, 0, nil, suite, "server", "--url", in.proxyURL, "--scenario", sc, "-o", t.TempDir())
			if !strings.Contains(out, "Passed:") || failedScenario.MatchString(out) {
				t.Errorf("%s: no pass reported:\n%s", sc, out)
			}
		}
	})
	// docs/API.md says refusals by the SDK's HTTP layer are text/plain,
	// not OML's envelope; this pins that sentence.
	t.Run("sdk-refusal-is-text", func(t *testing.T) {
		t.Parallel()
		r := s.do(t, "POST", "/mcp", in.key, `{"jsonrpc": "2.0", "id": 1, "method": "ping"}`, "Content-Type", "text/plain")
		if r.Status != http.StatusUnsupportedMediaType || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("%d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
	})
	for _, era := range []struct{ name, flag string }{{"2025-11-25", "legacy"}, {"2026-07-28", "modern"}} {
		t.Run("inspector/"+era.name, func(t *testing.T) {
			t.Parallel()
			in.inspector(t, era.flag, hit)
		})
	}
}

// failedScenario matches the conformance suite's count of failed checks
// when it is not zero.
var failedScenario = regexp.MustCompile(`Failed: [1-9]`)

// serveProxy forwards ln's requests to target with the bearer key added,
// leaving Host and Origin as the client sent them.
func (in interop) serveProxy(t *testing.T, ln net.Listener, target string) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.Host = pr.In.Host // the client's Host, for the DNS-rebinding scenario
		pr.Out.Header.Set("Authorization", "Bearer "+in.key)
	}}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
}

// node_ runs node with args in the interop directory and fails t unless it
// exits with want; it returns stdout and stderr together.
func (in interop) node_(t *testing.T, want int, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, in.node, args...)
	cmd.Dir = in.dir
	home := t.TempDir() // the Inspector keeps a catalog under HOME
	cmd.Env = append([]string{
		"PATH=" + filepath.Dir(in.node) + ":" + os.Getenv("PATH"), "HOME=" + home, "NO_COLOR=1",
		"OML_MCP_URL=" + in.mcpURL, "OML_API_KEY=" + in.key, "OML_CASE=" + in.kase,
	}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", filepath.Base(args[0]), err)
	}
	t.Logf("%s %s (%s, exit %d):\n%s", filepath.Base(args[0]), strings.Join(args[1:], " "), time.Since(start).Round(time.Millisecond), code, out.String())
	if code != want {
		t.Fatalf("exit %d, want %d", code, want)
	}
	return out.String()
}

// inspector runs the Inspector CLI in one era: tools/list with --strict
// must report no portability finding, a recall must succeed, and a refusal
// must arrive as OML's typed error (exit 5, tool_is_error), not a schema
// failure.
func (in interop) inspector(t *testing.T, era, hit string) {
	cli := filepath.Join(in.dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	base := []string{cli, "--cli", in.mcpURL, "--transport", "http", "--protocol-era", era,
		"--header", "Authorization: Bearer " + in.key, "--format", "json"}
	run := func(want int, extra ...string) map[string]json.RawMessage {
		t.Helper()
		out := in.node_(t, want, nil, append(append([]string{}, base...), extra...)...)
		if strings.Contains(out, "Warning:") || strings.Contains(out, "Schema portability") {
			t.Errorf("portability findings:\n%s", out)
		}
		var env map[string]json.RawMessage
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &env) == nil {
				return env
			}
		}
		t.Fatalf("no JSON result in:\n%s", out)
		return nil
	}

	list := run(0, "--method", "tools/list", "--strict")
	if _, ok := list["schemaFindings"]; ok {
		t.Errorf("schemaFindings: %s", list["schemaFindings"])
	}
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	_ = json.Unmarshal(list["result"], &tools)
	if len(tools.Tools) == 0 {
		t.Fatalf("no tools: %s", list["result"])
	}

	var kase map[string]string
	_ = json.Unmarshal([]byte(in.kase), &kase)
	recall := run(0, "--method", "tools/call", "--tool-name", "oml_recall",
		"--tool-args-json", `{"query": "`+kase["query"]+`", "scope": "`+kase["scope"]+`", "k": 5}`)
	if !strings.Contains(string(recall["result"]), hit) {
		t.Errorf("recall result lacks %s: %s", hit, recall["result"])
	}

	refused := run(5, "--method", "tools/call", "--tool-name", "oml_recall",
		"--tool-args-json", `{"query": "q", "scope": "`+kase["missing_scope"]+`"}`)
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Error struct{ Code string } `json:"error"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(refused["result"], &res); err != nil || !res.IsError || res.StructuredContent.Error.Code != "access.not_found" {
		t.Errorf("refusal: %v %s", err, refused["result"])
	}
}
