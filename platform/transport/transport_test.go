package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/transport"
)

const goodKey = "oml_k_good"

type fakeAuth struct{}

func (fakeAuth) Authenticate(_ context.Context, token string) (auth.Caller, error) {
	if token != goodKey {
		return auth.Caller{}, errs.New(errs.AuthInvalid, "valid key", "bad key")
	}
	return auth.Caller{TenantID: "tn", KeyID: "key_1", Role: "writer"}, nil
}

type echoIn struct {
	Name  string `json:"name"`
	Count int    `json:"count,omitempty"`
}

type echoOut struct {
	Hello string `json:"hello"`
	Key   string `json:"key"`
}

type testModule struct{}

func (testModule) Routes(r chi.Router) {
	r.Post("/echo", transport.Handler(func(w http.ResponseWriter, r *http.Request) error {
		var in echoIn
		if err := transport.Decode(r, &in); err != nil {
			return err
		}
		transport.WriteJSON(w, http.StatusOK, echoOut{Hello: in.Name})
		return nil
	}))
	r.Get("/boom", transport.Handler(func(http.ResponseWriter, *http.Request) error {
		return fmt.Errorf("database exploded: secret detail")
	}))
	r.Get("/things/{id}", func(w http.ResponseWriter, r *http.Request) {
		transport.WriteJSON(w, http.StatusOK, map[string]string{"id": chi.URLParam(r, "id"), "q": r.URL.Query().Get("q")})
	})
	r.Post("/idem", transport.Handler(func(w http.ResponseWriter, r *http.Request) error {
		key, err := transport.IdempotencyKey(r, "")
		if err != nil {
			return err
		}
		transport.WriteJSON(w, http.StatusOK, map[string]string{"key": key})
		return nil
	}))
}

func (testModule) Tools(t *transport.Tools) {
	transport.Add(t, transport.ToolSpec{Name: "echo", Description: "echo"}, func(ctx context.Context, in echoIn) (echoOut, error) {
		if in.Name == "deny" {
			return echoOut{}, errs.New(errs.NotFound, "rule R", "nothing here")
		}
		c, _ := auth.From(ctx)
		return echoOut{Hello: in.Name, Key: c.KeyID}, nil
	})
	transport.Add(t, transport.ToolSpec{Name: "boom", Description: "a tool with a bug"}, func(context.Context, struct{}) (echoOut, error) {
		var m map[string]int
		m["x"] = 1 //lint:ignore SA5000 a nil map write on purpose: the kind of bug that must not stop a replica
		return echoOut{}, nil
	})
}

func setup(t *testing.T) *httptest.Server {
	t.Helper()
	h := transport.New(transport.Options{
		Authenticator: fakeAuth{}, MaxBodyBytes: 64 << 10,
		PublicURL: "http://oml.example:8080", AllowedOrigins: []string{"https://console.example"}, Name: "oml",
	}, testModule{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) errorCode(t *testing.T) errs.Code {
	t.Helper()
	var env errs.Envelope
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatalf("not an error envelope: %s", r.body)
	}
	return env.Error.Code
}

func send(t *testing.T, srv *httptest.Server, method, path string, body io.Reader, headers map[string]string) reply {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

var authed = map[string]string{"Authorization": "Bearer " + goodKey}

func TestHTTPRefusalsAreTyped(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	big := strings.Repeat("x", 10<<20)
	cases := []struct {
		name    string
		method  string
		path    string
		body    string
		headers map[string]string
		status  int
		code    errs.Code
	}{
		{"no key", "POST", "/v1/echo", `{"name":"a"}`, nil, 401, errs.AuthMissing},
		{"not bearer", "POST", "/v1/echo", `{"name":"a"}`, map[string]string{"Authorization": "Basic x"}, 401, errs.AuthMissing},
		{"bad key", "POST", "/v1/echo", `{"name":"a"}`, map[string]string{"Authorization": "Bearer nope"}, 401, errs.AuthInvalid},
		{"unknown route without key is 401", "GET", "/v1/nowhere", "", nil, 401, errs.AuthMissing},
		{"unknown route", "GET", "/v1/nowhere", "", authed, 404, errs.RouteNotFound},
		{"malformed JSON", "POST", "/v1/echo", `{"name":`, authed, 400, errs.Validation},
		{"not an object", "POST", "/v1/echo", `["a"]`, authed, 400, errs.Validation},
		{"unknown field", "POST", "/v1/echo", `{"name":"a","boss":"x"}`, authed, 400, errs.Validation},
		{"field name in another case", "POST", "/v1/echo", `{"NAME":"a"}`, authed, 400, errs.Validation},
		{"NUL in a string", "POST", "/v1/echo", `{"name":"a\u0000b"}`, authed, 400, errs.Validation},
		{"wrong type", "POST", "/v1/echo", `{"name":1}`, authed, 400, errs.Validation},
		{"trailing data", "POST", "/v1/echo", `{"name":"a"}{}`, authed, 400, errs.Validation},
		{"empty body", "POST", "/v1/echo", ``, authed, 400, errs.Validation},
		{"10 MiB body", "POST", "/v1/echo", `{"name":"` + big + `"}`, authed, 413, errs.LimitSize},
		{"internal error is masked", "GET", "/v1/boom", "", authed, 500, errs.Internal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := send(t, srv, c.method, c.path, strings.NewReader(c.body), c.headers)
			if r.status != c.status || r.errorCode(t) != c.code {
				t.Fatalf("got %d %s, want %d %s: %s", r.status, r.errorCode(t), c.status, c.code, r.body)
			}
			if bytes.Contains(r.body, []byte("secret detail")) {
				t.Fatalf("internal detail leaked: %s", r.body)
			}
			if c.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
}

// A body with no declared length is cut off while it is read.
func TestChunkedOversizeBody(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"name":"`))
		for range 200 {
			if _, err := pw.Write(bytes.Repeat([]byte("y"), 1024)); err != nil {
				return
			}
		}
		_, _ = pw.Write([]byte(`"}`))
		pw.Close()
	}()
	r := send(t, srv, "POST", "/v1/echo", pr, authed)
	if r.status != 413 || r.errorCode(t) != errs.LimitSize {
		t.Fatalf("got %d %s", r.status, r.body)
	}
}

func TestHealthIsAnonymous(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := send(t, srv, "GET", p, nil, nil); r.status != 200 {
			t.Fatalf("%s: %d", p, r.status)
		}
	}
}

func rpc(method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	return string(b)
}

var mcpHeaders = map[string]string{
	"Authorization": "Bearer " + goodKey,
	"Content-Type":  "application/json",
	"Accept":        "application/json, text/event-stream",
}

func with(base map[string]string, kv ...string) map[string]string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(m, kv[i])
		} else {
			m[kv[i]] = kv[i+1]
		}
	}
	return m
}

func TestMCPTransport(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	list := rpc("tools/list", map[string]any{})

	t.Run("GET is 405", func(t *testing.T) {
		r := send(t, srv, "GET", "/mcp", nil, mcpHeaders)
		if r.status != 405 || r.errorCode(t) != errs.MethodNotAllowed || r.header.Get("Allow") != "POST" {
			t.Fatalf("%d %v %s", r.status, r.header, r.body)
		}
	})
	t.Run("no key is 401 before dispatch", func(t *testing.T) {
		r := send(t, srv, "POST", "/mcp", strings.NewReader(list), with(mcpHeaders, "Authorization", ""))
		if r.status != 401 || r.errorCode(t) != errs.AuthMissing {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("foreign origin", func(t *testing.T) {
		r := send(t, srv, "POST", "/mcp", strings.NewReader(list), with(mcpHeaders, "Origin", "http://evil.example"))
		if r.status != 403 || r.errorCode(t) != errs.Denied {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("configured origins pass", func(t *testing.T) {
		for _, o := range []string{"http://oml.example:8080", "https://console.example"} {
			if r := send(t, srv, "POST", "/mcp", strings.NewReader(list), with(mcpHeaders, "Origin", o)); r.status != 200 {
				t.Fatalf("%s: %d %s", o, r.status, r.body)
			}
		}
	})
	t.Run("oversize body", func(t *testing.T) {
		body := rpc("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"name": strings.Repeat("z", 100<<10)}})
		r := send(t, srv, "POST", "/mcp", strings.NewReader(body), mcpHeaders)
		if r.status != 413 || r.errorCode(t) != errs.LimitSize {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("stateless: no session id issued, one sent is ignored", func(t *testing.T) {
		r := send(t, srv, "POST", "/mcp", strings.NewReader(list), with(mcpHeaders, "Mcp-Session-Id", "made-up"))
		if r.status != 200 || r.header.Get("Mcp-Session-Id") != "" || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Fatalf("%d %v %s", r.status, r.header, r.body)
		}
		if !bytes.Contains(r.body, []byte(`"name":"echo"`)) || !bytes.Contains(r.body, []byte(`"name":"version"`)) ||
			!bytes.Contains(r.body, []byte(`"outputSchema"`)) {
			t.Fatalf("tools/list: %s", r.body)
		}
	})
	t.Run("unknown tool is -32602 with the R1 message", func(t *testing.T) {
		r := send(t, srv, "POST", "/mcp", strings.NewReader(rpc("tools/call", map[string]any{"name": "oml_promote", "arguments": map[string]any{}})), mcpHeaders)
		var resp struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.body, &resp); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(transport.R1Message, "oml_promote")
		if resp.Error.Code != -32602 || resp.Error.Message != want {
			t.Fatalf("got %d %q", resp.Error.Code, resp.Error.Message)
		}
	})
}

func callTool(t *testing.T, srv *httptest.Server, args any) (isError bool, structured json.RawMessage) {
	t.Helper()
	r := send(t, srv, "POST", "/mcp", strings.NewReader(rpc("tools/call", map[string]any{"name": "echo", "arguments": args})), mcpHeaders)
	var resp struct {
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &resp); err != nil || r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	return resp.Result.IsError, resp.Result.StructuredContent
}

func TestToolResults(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	isErr, sc := callTool(t, srv, map[string]any{"name": "ada"})
	if isErr || string(sc) != `{"hello":"ada","key":"key_1"}` {
		t.Fatalf("ok call: %v %s", isErr, sc)
	}
	// A tenant in the arguments is ignored in favour of the key's (D6).
	isErr, sc = callTool(t, srv, map[string]any{"name": "ada", "tenant": "other", "tenant_id": "tn_other"})
	if isErr || string(sc) != `{"hello":"ada","key":"key_1"}` {
		t.Fatalf("tenant field: %v %s", isErr, sc)
	}
	for name, args := range map[string]any{
		"typed error":   map[string]any{"name": "deny"},
		"unknown field": map[string]any{"name": "a", "boss": "other"},
		"NUL":           map[string]any{"name": "a\x00"},
		"wrong type":    map[string]any{"name": 5},
	} {
		isErr, sc := callTool(t, srv, args)
		var env errs.Envelope
		if err := json.Unmarshal(sc, &env); err != nil || !isErr || env.Error.Code == "" || env.Error.Rule == "" {
			t.Fatalf("%s: isError=%v %s", name, isErr, sc)
		}
	}
}
