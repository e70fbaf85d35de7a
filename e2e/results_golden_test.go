package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	// goldenID matches OML ids (prefix, underscore, a 26-character ULID).
	goldenID = regexp.MustCompile(`\b(art|key|wa|ce|we|srv|evt|tn|pr|req|ups|gr|ses|ban)_[0-9A-HJKMNP-TV-Z]{26}\b`)
	// goldenTime matches RFC 3339 timestamps.
	goldenTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
)

// normalise replaces each distinct id by its prefix and order of first
// appearance (wa_1, wa_2, …) and every timestamp by a placeholder, so a
// golden file compares only what the protocol and the contract fix.
func normalise(b []byte) []byte {
	seen := map[string]string{}
	count := map[string]int{}
	b = goldenID.ReplaceAllFunc(b, func(id []byte) []byte {
		if n, ok := seen[string(id)]; ok {
			return []byte(n)
		}
		m := goldenID.FindSubmatch(id)
		count[string(m[1])]++
		n := fmt.Sprintf("%s_%d", m[1], count[string(m[1])])
		seen[string(id)] = n
		return []byte(n)
	})
	return goldenTime.ReplaceAll(b, []byte("<time>"))
}

// The MCP results a client receives — a success and one refusal of each
// error family — are a contract, like the catalog: content, structured
// content and isError as the official SDK client reads them.
func TestToolResultsGolden(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	frozen := s.createWorkarea(t, "universe.procurement", "archive", "--status", "validated")
	op := s.issueKey(t, "operator-1", "operator")
	writer := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	reader := s.mcpSession(t, tm.reader.Token, "2025-11-25")
	operator := s.mcpSession(t, op.Token, "2025-11-25")

	type result struct {
		Case   string              `json:"case"`
		Tool   string              `json:"tool"`
		Result *mcp.CallToolResult `json:"result,omitempty"`
		// Error is a JSON-RPC error as the client reports it.
		Error string `json:"error,omitempty"`
	}
	var got []result
	for _, c := range []struct {
		name string
		cs   *mcp.ClientSession
		tool string
		args map[string]any
		code string // "" for a success
	}{
		{"success", writer, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "quote", "text": "412 USD/t"}, ""},
		{"request.validation", writer, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "t", "owner": "globex"}, "request.validation"},
		{"access.not_found", writer, "oml_workarea_info", map[string]any{"workarea": "universe.nowhere"}, "access.not_found"},
		{"access.denied", reader, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "t"}, "access.denied"},
		{"access.verb_ceiling", operator, "oml_recall", map[string]any{"query": "price", "scope": "universe"}, "access.verb_ceiling"},
		{"workarea.frozen", writer, "oml_remember", map[string]any{"workarea": frozen.ID, "claim_key": "x", "text": "t"}, "workarea.frozen"},
		{"submission.lineage_required", writer, "oml_learn", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "t", "derives_from": []string{}}, "submission.lineage_required"},
		{"limit.ceiling", writer, "oml_graph", map[string]any{"scope": tm.crew.ID, "limit": 501}, "limit.ceiling"},
	} {
		res, err := c.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var sc struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &sc)
		if res.IsError != (c.code != "") || sc.Error.Code != c.code {
			t.Fatalf("%s: isError %v, code %q, want %q: %s", c.name, res.IsError, sc.Error.Code, c.code, b)
		}
		got = append(got, result{Case: c.name, Tool: c.tool, Result: res})
	}
	// R1: a verb the surface does not carry is absent, not refused: a
	// JSON-RPC error, not a tool result.
	_, err := writer.CallTool(t.Context(), &mcp.CallToolParams{Name: "oml_promote", Arguments: map[string]any{}})
	if err == nil {
		t.Fatal("oml_promote answered")
	}
	got = append(got, result{Case: "unknown tool (R1)", Tool: "oml_promote", Error: err.Error()})
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "results.golden.json", append(normalise(b), '\n'))
}
