package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omlhub/oml/platform/ids"
)

type workareaInfo struct {
	ID       string `json:"id"`
	Path     string `json:"path"`
	Status   string `json:"status"`
	Parent   string `json:"parent"`
	Children []struct {
		ID       string `json:"id"`
		PathLeaf string `json:"path_leaf"`
		Status   string `json:"status"`
	} `json:"children"`
	Edges            []any    `json:"edges"`
	MyEffectiveVerbs []string `json:"my_effective_verbs"`
	PermissionEpoch  int64    `json:"permission_epoch"`
}

type issuedKey struct {
	KeyID string `json:"key_id"`
	Token string `json:"token"`
}

func (s *server) createWorkarea(t testing.TB, parent, name string, extra ...string) workareaInfo {
	t.Helper()
	args := append([]string{"--json", "workarea", "create", "--parent", parent, "--name", name}, extra...)
	var w workareaInfo
	if err := json.Unmarshal([]byte(s.mustOML(t, s.AdminKey, args...)), &w); err != nil {
		t.Fatal(err)
	}
	return w
}

func (s *server) issueKey(t testing.TB, principal, role string) issuedKey {
	t.Helper()
	var k issuedKey
	out := s.mustOML(t, s.AdminKey, "--json", "key", "issue", "--principal", principal, "--role", role)
	if err := json.Unmarshal([]byte(out), &k); err != nil || k.Token == "" {
		t.Fatalf("key issue output %q: %v", out, err)
	}
	return k
}

func (s *server) grant(t testing.TB, key, workarea, scope, effect string) {
	t.Helper()
	s.mustOML(t, s.AdminKey, "grant", "add", "--key", key, "--workarea", workarea, "--scope", scope, "--effect", effect)
}

func childLeaves(w workareaInfo) []string {
	var out []string
	for _, c := range w.Children {
		out = append(out, c.PathLeaf)
	}
	return out
}

// The foundation's acceptance scenario, end to end on the real binaries.
func TestWalkingSkeleton(t *testing.T) {
	t.Parallel()
	s := startServer(t)

	s.createWorkarea(t, "universe", "procurement")
	crew := s.createWorkarea(t, "universe.procurement", "metals-crew", "--status", "committed", "--crew-name", "metals-crew")
	q1 := s.createWorkarea(t, crew.ID, "q1-2027")
	if crew.Path != "universe.procurement.metals-crew" || q1.Path != crew.Path+".q1-2027" || q1.Status != "development" {
		t.Fatalf("tree: %+v %+v", crew, q1)
	}
	writer := s.issueKey(t, "writer-1", "writer")
	s.grant(t, writer.KeyID, "universe.procurement", "reader", "allow")
	s.grant(t, writer.KeyID, "universe.procurement", "writer", "allow")

	// oml_workarea_info over MCP in both protocol eras and over HTTP agree.
	var views []json.RawMessage
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		cs := s.mcpSession(t, writer.Token, era)
		sc, isErr := callTool(t, cs, "oml_workarea_info", map[string]any{"workarea": crew.ID})
		if isErr {
			t.Fatalf("%s: tool error %s", era, sc)
		}
		views = append(views, sc)
	}
	httpView := s.do(t, "GET", "/v1/workareas/"+crew.ID, writer.Token, nil)
	if httpView.Status != 200 {
		t.Fatalf("HTTP: %d %s", httpView.Status, httpView.Body)
	}
	views = append(views, bytes.TrimSpace(httpView.Body))
	for i, v := range views {
		var a, b any
		_ = json.Unmarshal(v, &a)
		_ = json.Unmarshal(views[0], &b)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("view %d differs:\n%s\n%s", i, v, views[0])
		}
	}
	var shape map[string]json.RawMessage
	_ = json.Unmarshal(views[0], &shape)
	wantKeys := []string{"children", "crew", "edges", "id", "my_effective_verbs", "parent", "path", "permission_epoch", "status"}
	if got := slices.Sorted(maps.Keys(shape)); !slices.Equal(got, wantKeys) {
		t.Fatalf("output keys %v, want the seed's %v", got, wantKeys)
	}
	var before workareaInfo
	_ = json.Unmarshal(views[0], &before)
	if !slices.Contains(before.MyEffectiveVerbs, "remember") || !slices.Equal(childLeaves(before), []string{"q1-2027"}) {
		t.Fatalf("before deny: %+v", before)
	}

	// A deny on the child removes it from children; a deny of writer on the
	// node removes the write verbs.
	s.grant(t, writer.KeyID, q1.ID, "reader", "deny")
	s.grant(t, writer.KeyID, crew.ID, "writer", "deny")
	after := decode[workareaInfo](t, s.do(t, "GET", "/v1/workareas/"+crew.ID, writer.Token, nil), 200)
	if len(after.Children) != 0 || slices.Contains(after.MyEffectiveVerbs, "remember") || !slices.Contains(after.MyEffectiveVerbs, "recall") {
		t.Fatalf("after deny: %+v", after)
	}
	if after.PermissionEpoch != before.PermissionEpoch+2 {
		t.Fatalf("permission_epoch %d, want %d", after.PermissionEpoch, before.PermissionEpoch+2)
	}
	if r := s.do(t, "GET", "/v1/workareas/"+q1.ID, writer.Token, nil); r.Status != 404 || r.code() != "access.not_found" {
		t.Fatalf("denied child: %d %s", r.Status, r.Body)
	}

	// Another tenant's workarea and a nonexistent one: byte-identical.
	var other struct {
		RootWorkareaID string `json:"root_workarea_id"`
	}
	if err := json.Unmarshal([]byte(s.run(t, "bootstrap", "--tenant", "globex")), &other); err != nil {
		t.Fatal(err)
	}
	foreign := s.do(t, "GET", "/v1/workareas/"+other.RootWorkareaID, s.AdminKey, nil)
	missing := s.do(t, "GET", "/v1/workareas/"+ids.New(ids.Workarea), s.AdminKey, nil)
	if foreign.Status != 404 || foreign.code() != "access.not_found" || !sameRefusal(foreign.Body, missing.Body) {
		t.Fatalf("foreign %d %s\nmissing %d %s", foreign.Status, foreign.Body, missing.Status, missing.Body)
	}
	cs := s.mcpSession(t, s.AdminKey, "2026-07-28")
	mf, errF := callTool(t, cs, "oml_workarea_info", map[string]any{"workarea": other.RootWorkareaID})
	mm, errM := callTool(t, cs, "oml_workarea_info", map[string]any{"workarea": ids.New(ids.Workarea)})
	if !errF || !errM || !sameRefusal(mf, mm) || !strings.Contains(string(mf), `"access.not_found"`) {
		t.Fatalf("MCP foreign %s / missing %s", mf, mm)
	}

	// The CLI's tools and call speak MCP with the same key.
	tools := s.mustOML(t, writer.Token, "tools")
	for _, want := range []string{"oml_workarea_info", "whoami", "version", "inputSchema"} {
		if !strings.Contains(tools, want) {
			t.Fatalf("oml tools lacks %q:\n%s", want, tools)
		}
	}
	out := s.mustOML(t, writer.Token, "call", "oml_workarea_info", `{"workarea":"universe.procurement"}`)
	if !strings.Contains(out, `"universe.procurement"`) {
		t.Fatalf("oml call: %s", out)
	}
	if _, errOut, err := s.oml(t, writer.Token, "call", "oml_promote", `{}`); err == nil || !strings.Contains(errOut, "R1") {
		t.Fatalf("oml call oml_promote: err=%v %s", err, errOut)
	}
	who := s.mustOML(t, writer.Token, "--json", "whoami")
	if !strings.Contains(who, writer.KeyID) || !strings.Contains(who, s.RootID) {
		t.Fatalf("whoami: %s", who)
	}
}

// The MCP surface carries no verb beyond the catalog (R1).
func TestUnknownToolIsAbsent(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		cs := s.mcpSession(t, s.AdminKey, era)
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "oml_promote", Arguments: map[string]any{}})
		want := "Unknown tool: oml_promote. This surface carries no promote, sign, demote, delete or admin verb (R1); see tools/list for the complete catalog."
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: err = %v", era, err)
		}
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if tool.InputSchema == nil || tool.OutputSchema == nil {
				t.Fatalf("tool %s lacks a schema", tool.Name)
			}
			// Word by word: signal_append carries no "sign" verb.
			for _, word := range strings.Split(tool.Name, "_") {
				if slices.Contains([]string{"promote", "sign", "demote", "delete", "verdict", "admin"}, word) {
					t.Fatalf("tool %s carries a forbidden verb", tool.Name)
				}
			}
		}
	}
}
