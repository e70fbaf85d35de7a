package transport_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/omlhub/oml/platform/transport"
)

type note struct {
	Pending []string `json:"pending"`
}

func TestTrailerRidesOnSuccessOnly(t *testing.T) {
	t.Parallel()
	var pending atomic.Int32
	tr, err := transport.NewTrailer("notifications", func(context.Context) (note, bool, error) {
		if pending.Add(-1) < 0 {
			pending.Store(0)
			return note{}, false, nil
		}
		return note{Pending: []string{"answer"}}, true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(transport.New(transport.Options{
		Authenticator: fakeAuth{}, MaxBodyBytes: 64 << 10, PublicURL: "http://oml.example:8080", Name: "oml", Trailer: tr,
	}, testModule{}))
	t.Cleanup(srv.Close)

	if _, sc := callTool(t, srv, map[string]any{"name": "ada"}); string(sc) != `{"hello":"ada","key":"key_1"}` {
		t.Fatalf("nothing pending: %s", sc)
	}
	pending.Store(1)
	r := send(t, srv, "POST", "/mcp", strings.NewReader(rpc("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"name": "ada"}})), mcpHeaders)
	var resp struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
			Meta              json.RawMessage `json:"_meta"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Result.StructuredContent); got != `{"hello":"ada","key":"key_1","notifications":{"pending":["answer"]}}` {
		t.Fatalf("pending: %s", got)
	}
	if got := string(resp.Result.Meta); got != `{"notifications":{"pending":["answer"]}}` {
		t.Fatalf("_meta: %s", got)
	}
	// An error result carries no member and reads nothing.
	pending.Store(1)
	if isErr, sc := callTool(t, srv, map[string]any{"name": "deny"}); !isErr || strings.Contains(string(sc), "notifications") {
		t.Fatalf("refusal: %s", sc)
	}
	if pending.Load() != 1 {
		t.Fatalf("a refusal read the trailer")
	}
	// Every success schema admits the member.
	list := send(t, srv, "POST", "/mcp", strings.NewReader(rpc("tools/list", map[string]any{})), mcpHeaders)
	if strings.Count(string(list.body), `"notifications":{`) < 2 {
		t.Fatalf("tools/list does not admit notifications: %s", list.body)
	}
}
