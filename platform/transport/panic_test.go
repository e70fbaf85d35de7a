package transport_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/transport"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func setupLogged(t *testing.T) (*httptest.Server, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	h := transport.New(transport.Options{
		Logger: slog.New(slog.NewTextHandler(logs, nil)), Authenticator: fakeAuth{}, MaxBodyBytes: 64 << 10,
		PublicURL: "http://oml.example:8080", Name: "oml",
	}, testModule{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, logs
}

// A panicking tool answers a typed internal result, is logged with its
// stack, and the server goes on answering.
func TestToolPanicIsTypedInternal(t *testing.T) {
	t.Parallel()
	srv, logs := setupLogged(t)
	for range 3 {
		r := send(t, srv, "POST", "/mcp", strings.NewReader(rpc("tools/call", map[string]any{"name": "boom", "arguments": map[string]any{}})),
			with(mcpHeaders, "X-Request-Id", "req-boom"))
		var resp struct {
			Result struct {
				IsError           bool          `json:"isError"`
				StructuredContent errs.Envelope `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(r.body, &resp); err != nil || r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if e := resp.Result.StructuredContent.Error; !resp.Result.IsError || e.Code != errs.Internal || e.Rule == "" || e.Retryable ||
			strings.Contains(e.Message, "nil map") {
			t.Fatalf("panic answered %s", r.body)
		}
	}
	if isErr, sc := callTool(t, srv, map[string]any{"name": "ada"}); isErr || !bytes.Contains(sc, []byte("ada")) {
		t.Fatalf("after the panics: %v %s", isErr, sc)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "level=INFO msg=request") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	out := logs.String()
	for _, want := range []string{"msg=panic", "request_id=req-boom", "tool=boom", "nil map", "runtime/debug.Stack", "error_code=internal"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
}
