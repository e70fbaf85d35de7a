package e2e

import (
	"testing"

	"github.com/omlhub/oml/platform/ids"
)

// Every refused oml_attach call is a typed isError result, and the server
// answers the next call: a refusal never builds its output from the empty
// session the service returns with its error.
func TestAttachRefusalsKeepServerUp(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	op := s.issueKey(t, "ops", "operator")
	_, data, digest := randomFile(t, 1000)
	mine := decode[uploadSession](t, s.openUpload(t, tm.writer.Token, len(data), digest), 201)
	open := map[string]any{"action": "open", "media_type": "application/octet-stream", "size_bytes": len(data), "expected_digest": "sha256:" + digest}
	status := func(id string) map[string]any { return map[string]any{"action": "status", "upload_session": id} }

	for _, c := range []struct {
		name string
		key  string
		args map[string]any
		code string
	}{
		{"status of an unknown session", tm.writer.Token, status(ids.New(ids.Upload)), "access.not_found"},
		{"status of a malformed id", tm.writer.Token, status("nonsense"), "access.not_found"},
		{"status of another key's session", tm.author2.Token, status(mine.UploadSession), "access.not_found"},
		{"open with a malformed digest", tm.writer.Token, map[string]any{"action": "open", "media_type": "application/octet-stream", "size_bytes": 10, "expected_digest": "sha256:abc"}, "request.validation"},
		{"open without writer access", tm.reader.Token, open, "access.denied"},
		{"open by an operator", op.Token, open, "access.verb_ceiling"},
		{"status by an operator", op.Token, status(mine.UploadSession), "access.verb_ceiling"},
	} {
		code, body := toolError(t, s.mcpSession(t, c.key, "2025-11-25"), "oml_attach", c.args)
		if code != c.code {
			t.Errorf("%s: %s, want %s", c.name, body, c.code)
		}
		select {
		case err := <-s.done:
			s.cmd = nil // nothing left to stop
			t.Fatalf("%s: oml-server exited (%v):\n%s", c.name, err, s.logs.String())
		default:
		}
		if r := s.do(t, "GET", "/healthz", "", nil); r.Status != 200 {
			t.Fatalf("%s: healthz %d afterwards", c.name, r.Status)
		}
		toolJSON[map[string]any](t, s.mcpSession(t, tm.writer.Token, "2025-11-25"), "version", map[string]any{})
	}
	// The owner still sees its session.
	got := toolJSON[uploadSession](t, s.mcpSession(t, tm.writer.Token, "2025-11-25"), "oml_attach", status(mine.UploadSession))
	if got.UploadSession != mine.UploadSession || got.PartsExpected != 1 || got.State != "open" {
		t.Fatalf("owner's status: %+v", got)
	}
}
