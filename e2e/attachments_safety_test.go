package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

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

// answer is one concurrent request's outcome.
type answer struct {
	status int
	code   string
	body   []byte
	err    error
}

// concurrent is an HTTP client that keeps a connection per concurrent
// request, so a burst of requests reaches the server together.
var concurrent = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// send is a request safe to make from any goroutine: it reports transport
// failures instead of failing the test.
func (s *server) send(method, path, key string, body []byte) answer {
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := concurrent.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, code: reply{Body: b}.code(), body: b, err: err}
}

// burst sends n requests at once and returns their answers.
func burst(n int, req func(i int) answer) []answer {
	out := make([]answer, n)
	var start, wg sync.WaitGroup
	start.Add(1)
	for i := range out {
		wg.Go(func() {
			start.Wait()
			out[i] = req(i)
		})
	}
	start.Done()
	wg.Wait()
	return out
}

// Sixteen submissions at once naming one completed upload session, in
// several rounds: one binds it, every other is refused
// submission.upload_unusable at once, and nothing of the losers is left
// behind.
func TestAttachConcurrentBindsOneSession(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	const n, rounds = 16, 3
	// Long texts keep each submission's transaction open a while after
	// its binding, as a real one with a scan and a signature does.
	text := strings.Repeat("Accra Metals will hold the quoted price for aluminium ingots through the quarter. ", 400)
	for round := range rounds {
		_, data, digest := randomFile(t, 1000)
		ses := decode[uploadSession](t, s.openUpload(t, tm.writer.Token, len(data), digest), 201)
		if done := decode[uploadSession](t, s.putPart(t, tm.writer.Token, ses.UploadSession, 1, data), 200); done.State != "complete" {
			t.Fatalf("upload: %+v", done)
		}
		// Warm connections and the server's pool, so the burst is not
		// spread out by connecting.
		burst(n, func(int) answer { return s.send("GET", "/v1/memories/mine", tm.writer.Token, nil) })

		began := time.Now()
		answers := burst(n, func(i int) answer {
			body, _ := json.Marshal(map[string]any{
				"workarea": tm.crew.ID, "claim_key": fmt.Sprintf("quote-%d-%d", round, i), "text": fmt.Sprintf("Copy %d. %s", i, text),
				"attachments": []map[string]string{{"upload_session": ses.UploadSession}},
			})
			return s.send("POST", "/v1/memories", tm.writer.Token, body)
		})
		took := time.Since(began)
		won := 0
		for i, a := range answers {
			switch {
			case a.err != nil:
				t.Errorf("round %d, submission %d: %v", round, i, a.err)
			case a.status == 201:
				won++
			case (a.status == 409 || a.status == 422) && a.code == "submission.upload_unusable":
			default:
				t.Errorf("round %d, submission %d: %d %s", round, i, a.status, a.body)
			}
		}
		if won != 1 {
			t.Errorf("round %d: %d submissions bound the session, want 1", round, won)
		}
		// Losers wait for the winner's commit at most, never for deadlock
		// detection and retries.
		if took > 5*time.Second {
			t.Errorf("round %d: the submissions took %s", round, took)
		}
	}
	for q, want := range map[string]int64{
		`SELECT count(*) FROM admission.artifacts`:                                                            rounds,
		`SELECT count(*) FROM attachments.bindings`:                                                           rounds,
		`SELECT count(*) FROM attachments.sessions WHERE bound_at IS NOT NULL`:                                rounds,
		`SELECT count(*) FROM platform.journal_events WHERE event_type LIKE 'submission.%'`:                   rounds,
		`SELECT count(*) FROM attachments.bindings b JOIN admission.artifacts a ON a.id = b.artifact_id`:      rounds,
		`SELECT count(*) FROM (SELECT session_id FROM attachments.bindings GROUP BY 1 HAVING count(*) > 1) x`: 0,
	} {
		if got := s.count(t, q); got != want {
			t.Errorf("%s: %d, want %d", q, got, want)
		}
	}
	if out := s.mustOML(t, s.AdminKey, "admin", "journal", "verify"); !strings.Contains(out, "ok") {
		t.Errorf("journal verify: %s", out)
	}
}

// Duplicates of a part racing its first write never keep the session's
// write lease: after each round of them the lease is free (a held one
// would answer the next part upload.busy for minutes), and the upload
// completes.
func TestAttachDuplicatePartsReleaseLease(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	const part = 5 << 20
	const parts, senders = 9, 8
	_, data, digest := randomFile(t, (parts-1)*part+1000)
	ses := decode[uploadSession](t, s.openUpload(t, tm.writer.Token, len(data), digest), 201)
	path := func(n int) string { return fmt.Sprintf("/v1/attachments/uploads/%s/parts/%d", ses.UploadSession, n) }

	for n := 1; n < parts; n++ {
		body := data[(n-1)*part : n*part]
		// Each sender sends part n until it is answered 200 (stored, or
		// already stored), retrying when another request holds the lease.
		var wg sync.WaitGroup
		errc := make(chan string, senders)
		for range senders {
			wg.Go(func() {
				deadline := time.Now().Add(30 * time.Second)
				for time.Now().Before(deadline) {
					a := s.send("PUT", path(n), tm.writer.Token, body)
					switch {
					case a.err != nil || a.code == "upload.busy":
						continue
					case a.status == 200:
						return
					default:
						errc <- fmt.Sprintf("part %d: %d %s", n, a.status, a.body)
						return
					}
				}
				errc <- fmt.Sprintf("part %d: still busy after 30s", n)
			})
		}
		wg.Wait()
		close(errc)
		for e := range errc {
			t.Fatal(e)
		}
		// Every request has been answered: none may hold the lease now.
		deadline := time.Now().Add(2 * time.Second)
		for s.count(t, `SELECT count(*) FROM attachments.sessions WHERE lease_token IS NOT NULL`) != 0 {
			if time.Now().After(deadline) {
				next := s.putPart(t, tm.writer.Token, ses.UploadSession, n+1, data[n*part:min((n+1)*part, len(data))])
				t.Fatalf("after the duplicates of part %d were answered, the write lease is still held; part %d: %d %s", n, n+1, next.Status, next.Body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	last := s.putPart(t, tm.writer.Token, ses.UploadSession, parts, data[(parts-1)*part:])
	if done := decode[uploadSession](t, last, 200); done.State != "complete" || done.PartsReceived != parts {
		t.Fatalf("last part: %+v", done)
	}
}
