package transport_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/omlhub/oml/platform/transport"
)

// BenchmarkTransportOverhead is the cost of the surface itself, in process
// and without a database: one trivial tool call over MCP (the official SDK
// in stateless JSON mode) against the same work as a plain JSON route.
func BenchmarkTransportOverhead(b *testing.B) {
	h := transport.New(transport.Options{Authenticator: fakeAuth{}, MaxBodyBytes: 1 << 20, PublicURL: "http://x", Name: "oml"}, testModule{})
	b.Run("route=http", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest("POST", "/v1/echo", strings.NewReader(`{"name":"ada"}`))
			req.Header.Set("Authorization", "Bearer "+goodKey)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatal(w.Code, w.Body.String())
			}
		}
	})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"name":"ada"}}}`
	b.Run("route=mcp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+goodKey)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 || strings.Contains(w.Body.String(), `"isError":true`) {
				b.Fatal(w.Code, w.Body.String())
			}
		}
	})
}
