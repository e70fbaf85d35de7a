package transport_test

import (
	"strings"
	"testing"

	"github.com/omlhub/oml/platform/errs"
)

// Bad bytes in a path, a query or an Idempotency-Key header are refused at
// the boundary, never handed on.
func TestBoundaryRefusals(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	cases := []struct {
		name, method, path string
		headers            map[string]string
		status             int
	}{
		{"plain path", "GET", "/v1/things/a-b?q=x", authed, 200},
		{"escaped UTF-8 path", "GET", "/v1/things/%C3%A9?q=%C3%A9", authed, 200},
		{"NUL in path", "GET", "/v1/things/a%00b", authed, 400},
		{"invalid UTF-8 in path", "GET", "/v1/things/a%FFb", authed, 400},
		{"the key comes before a bad path", "GET", "/v1/things/a%00b", nil, 401},
		{"NUL in query value", "GET", "/v1/things/a?q=%00", authed, 400},
		{"invalid UTF-8 in query value", "GET", "/v1/things/a?q=%FF", authed, 400},
		{"invalid UTF-8 in query name", "GET", "/v1/things/a?%FF=1", authed, 400},
		{"malformed query escape", "GET", "/v1/things/a?q=%zz", authed, 400},
		{"NUL on an unknown route", "GET", "/v1/nowhere%00", authed, 400},
		{"idempotency key", "POST", "/v1/idem", with(authed, "Idempotency-Key", "setup/step-1"), 200},
		{"idempotency key not UTF-8", "POST", "/v1/idem", with(authed, "Idempotency-Key", "k\xff\xfe"), 400},
		{"idempotency key with a tab", "POST", "/v1/idem", with(authed, "Idempotency-Key", "a\tb"), 400},
		{"idempotency key too long", "POST", "/v1/idem", with(authed, "Idempotency-Key", strings.Repeat("k", 256)), 400},
		{"bearer token not UTF-8", "GET", "/v1/things/a", map[string]string{"Authorization": "Bearer oml_k_\xff\xfe"}, 401},
	}
	for _, c := range cases {
		r := send(t, srv, c.method, c.path, nil, c.headers)
		if r.status != c.status {
			t.Fatalf("%s: %d %s", c.name, r.status, r.body)
		}
		if c.status == 400 && r.errorCode(t) != errs.Validation {
			t.Fatalf("%s: %s", c.name, r.body)
		}
	}
}

// Every response carries the security headers: JSON, errors, the guide,
// health and MCP.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	list := rpc("tools/list", map[string]any{})
	for _, c := range []struct {
		method, path, body string
		headers            map[string]string
	}{
		{"GET", "/healthz", "", nil},
		{"GET", "/v1/guide", "", authed},
		{"POST", "/v1/echo", `{"name":"a"}`, authed},
		{"GET", "/v1/nowhere", "", authed},
		{"GET", "/v1/nowhere", "", nil},
		{"GET", "/v1/boom", "", authed},
		{"POST", "/mcp", list, mcpHeaders},
		{"GET", "/mcp", "", mcpHeaders},
	} {
		r := send(t, srv, c.method, c.path, strings.NewReader(c.body), c.headers)
		for h, want := range map[string]string{
			"X-Content-Type-Options":  "nosniff",
			"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
			"X-Frame-Options":         "DENY",
		} {
			if got := r.header.Get(h); got != want {
				t.Fatalf("%s %s (%d): %s = %q, want %q", c.method, c.path, r.status, h, got, want)
			}
		}
	}
}
