package main

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

const workareaJSON = `{"id":"wa_2","path":"universe.procurement","status":"committed",
	"crew":{"name":"buyers"},"parent":"wa_1","children":[{"id":"wa_3","path_leaf":"tenders","status":"development"}],
	"edges":[],"my_effective_verbs":["read","write"],"permission_epoch":4}`

func TestHTTPCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		reply    reply
		method   string
		path     string
		body     string // "" when the request has none
		idemKey  string
		wantOut  []string
		wantNot  []string
		wantJSON bool // stdout must be the reply, as JSON
	}{
		{
			name: "workarea create",
			args: []string{"workarea", "create", "--parent", "universe", "--name", "procurement", "--status", "committed",
				"--crew-name", "buyers", "--crew-charter-uri", "https://x/charter", "--idempotency-key", "k-1"},
			reply:  reply{http.StatusCreated, workareaJSON},
			method: http.MethodPost, path: "/v1/workareas", idemKey: "k-1",
			body:    `{"parent":"universe","name":"procurement","status":"committed","crew":{"name":"buyers","charter_uri":"https://x/charter"}}`,
			wantOut: []string{"created workarea universe.procurement", "wa_2", "tenders", "read, write"},
		},
		{
			name:   "workarea create minimal",
			args:   []string{"workarea", "create", "--parent", "wa_1", "--name", "ops"},
			reply:  reply{http.StatusCreated, workareaJSON},
			method: http.MethodPost, path: "/v1/workareas",
			body: `{"parent":"wa_1","name":"ops"}`,
		},
		{
			name:   "workarea show escapes the segment",
			args:   []string{"workarea", "show", "odd/ref"},
			reply:  reply{http.StatusOK, workareaJSON},
			method: http.MethodGet, path: "/v1/workareas/odd%2Fref",
			wantOut: []string{"universe.procurement", "permission epoch"},
		},
		{
			name:   "workarea set status, flags after the id",
			args:   []string{"workarea", "set", "universe.procurement", "--status", "validated", "--crew-external-manager", "jira"},
			reply:  reply{http.StatusOK, workareaJSON},
			method: http.MethodPatch, path: "/v1/workareas/universe.procurement",
			body: `{"status":"validated","crew":{"external_manager":"jira"}}`,
		},
		{
			name:   "workarea set clears the crew",
			args:   []string{"workarea", "set", "wa_2", "--clear-crew"},
			reply:  reply{http.StatusOK, workareaJSON},
			method: http.MethodPatch, path: "/v1/workareas/wa_2",
			body: `{"crew":null}`,
		},
		{
			name:   "key issue shows the token once",
			args:   []string{"key", "issue", "--principal", "alice", "--role", "writer"},
			reply:  reply{http.StatusCreated, `{"key_id":"key_9","token":"oml_tok_abc","principal":"alice","role":"writer"}`},
			method: http.MethodPost, path: "/v1/keys",
			body:    `{"principal":"alice","role":"writer"}`,
			wantOut: []string{"key_9", "alice", "writer", "oml_tok_abc", "shown only once"},
		},
		{
			name: "key list is a table",
			args: []string{"key", "list"},
			reply: reply{http.StatusOK, `{"keys":[
				{"key_id":"key_1","principal":"admin","role":"admin","created_at":"2025-01-02T03:04:05Z","revoked_at":null},
				{"key_id":"key_22","principal":"bob","role":"reader","created_at":"2025-01-03T00:00:00Z","revoked_at":"2025-02-01T00:00:00Z"}]}`},
			method: http.MethodGet, path: "/v1/keys",
			wantOut: []string{
				"KEY_ID  PRINCIPAL  ROLE    CREATED               REVOKED",
				"key_1   admin      admin   2025-01-02T03:04:05Z  -",
				"key_22  bob        reader  2025-01-03T00:00:00Z  2025-02-01T00:00:00Z",
			},
		},
		{
			name:   "key revoke",
			args:   []string{"key", "revoke", "key_22"},
			reply:  reply{http.StatusOK, `{"key_id":"key_22","principal":"bob","role":"reader","created_at":"2025-01-03T00:00:00Z","revoked_at":"2025-02-01T00:00:00Z","permission_epoch":8}`},
			method: http.MethodDelete, path: "/v1/keys/key_22",
			wantOut: []string{"revoked key key_22", "permission epoch 8"},
		},
		{
			name: "grant add defaults to allow",
			args: []string{"grant", "add", "--key", "key_22", "--workarea", "universe.procurement", "--scope", "dreamer.review", "--idempotency-key", "g-1"},
			reply: reply{http.StatusCreated, `{"grant_id":"gr_5","permission_epoch":9,"key_id":"key_22","workarea":"wa_2",
				"scope":"dreamer.review","effect":"allow","created":true,"idempotent_replay":false}`},
			method: http.MethodPost, path: "/v1/grants", idemKey: "g-1",
			body:    `{"key_id":"key_22","workarea":"universe.procurement","scope":"dreamer.review","effect":"allow"}`,
			wantOut: []string{"grant added gr_5", "permission epoch 9"},
			wantNot: []string{"replay"},
		},
		{
			name: "grant add deny, replayed",
			args: []string{"grant", "add", "--key", "key_22", "--workarea", "wa_2", "--scope", "writer", "--effect", "deny"},
			reply: reply{http.StatusOK, `{"grant_id":"gr_6","permission_epoch":10,"key_id":"key_22","workarea":"wa_2",
				"scope":"writer","effect":"deny","created":false,"idempotent_replay":true}`},
			method: http.MethodPost, path: "/v1/grants",
			body:    `{"key_id":"key_22","workarea":"wa_2","scope":"writer","effect":"deny"}`,
			wantOut: []string{"already present: gr_6 deny writer", "idempotent replay"},
		},
		{
			name:   "grant remove",
			args:   []string{"grant", "remove", "gr_5"},
			reply:  reply{http.StatusOK, `{"grant_id":"gr_5","permission_epoch":11,"removed":true}`},
			method: http.MethodDelete, path: "/v1/grants/gr_5",
			wantOut: []string{"grant removed gr_5; permission epoch 11"},
		},
		{
			name:   "whoami",
			args:   []string{"whoami"},
			reply:  reply{http.StatusOK, `{"key_id":"key_1","principal":"admin","role":"admin","tenant_id":"tn_1","root_workarea":"wa_1","guide_url":"http://x/v1/guide"}`},
			method: http.MethodGet, path: "/v1/whoami",
			wantOut: []string{"principal      admin", "root_workarea  wa_1"},
		},
		{
			name:   "json prints the server's answer",
			args:   []string{"--json", "key", "issue", "--principal", "alice", "--role", "reader"},
			reply:  reply{http.StatusCreated, `{"key_id":"key_9","token":"oml_tok_abc","principal":"alice","role":"reader"}`},
			method: http.MethodPost, path: "/v1/keys",
			body:     `{"principal":"alice","role":"reader"}`,
			wantJSON: true,
			wantNot:  []string{"shown only once"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, rec := fakeAPI(t, tc.reply)
			res := runCLI(t, envFor(url), "", tc.args...)
			if res.err != nil {
				t.Fatalf("err = %v (stderr %q)", res.err, res.stderr)
			}
			reqs := rec.all()
			if len(reqs) != 1 {
				t.Fatalf("server saw %d requests, want 1", len(reqs))
			}
			got := reqs[0]
			if got.Method != tc.method || got.Path != tc.path {
				t.Errorf("request = %s %s, want %s %s", got.Method, got.Path, tc.method, tc.path)
			}
			for h, want := range map[string]string{
				"Authorization":   "Bearer " + testKey,
				"Content-Type":    "application/json",
				"Accept":          "application/json",
				"Idempotency-Key": tc.idemKey,
			} {
				if v := got.Header.Get(h); v != want {
					t.Errorf("header %s = %q, want %q", h, v, want)
				}
			}
			switch {
			case tc.body == "" && got.Body != "":
				t.Errorf("body = %s, want none", got.Body)
			case tc.body != "" && !sameJSON(t, got.Body, tc.body):
				t.Errorf("body = %s, want %s", got.Body, tc.body)
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout does not contain %q:\n%s", want, res.stdout)
				}
			}
			for _, not := range tc.wantNot {
				if strings.Contains(res.stdout, not) {
					t.Errorf("stdout contains %q:\n%s", not, res.stdout)
				}
			}
			if tc.wantJSON && !sameJSON(t, res.stdout, tc.reply.body) {
				t.Errorf("stdout = %s, want the reply %s", res.stdout, tc.reply.body)
			}
		})
	}
}

func TestErrorEnvelope(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reply   reply
		want    string
		wantAPI bool
	}{
		{
			name:    "typed refusal",
			reply:   reply{http.StatusNotFound, `{"error":{"code":"access.not_found","rule":"fail closed: unknown and out-of-scope are the same","message":"no workarea nope","retryable":false}}`},
			want:    "access.not_found: no workarea nope (rule: fail closed: unknown and out-of-scope are the same)",
			wantAPI: true,
		},
		{
			name:    "bad key",
			reply:   reply{http.StatusUnauthorized, `{"error":{"code":"auth.invalid_key","rule":"bearer keys","message":"unknown or revoked key","retryable":false}}`},
			want:    "auth.invalid_key: unknown or revoked key (rule: bearer keys)",
			wantAPI: true,
		},
		{
			name:  "not an envelope",
			reply: reply{http.StatusBadGateway, `<html>bad gateway</html>`},
			want:  "HTTP 502 Bad Gateway: <html>bad gateway</html>",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, _ := fakeAPI(t, tc.reply)
			res := runCLI(t, envFor(url), "", "workarea", "show", "nope")
			if res.err == nil || !strings.Contains(res.err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", res.err, tc.want)
			}
			var apiErr *APIError
			if errors.As(res.err, &apiErr) != tc.wantAPI {
				t.Fatalf("err is *APIError: %v, want %v", !tc.wantAPI, tc.wantAPI)
			}
			if res.stdout != "" {
				t.Errorf("stdout = %q, want nothing on a refusal", res.stdout)
			}
		})
	}
}

func TestJournalVerify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		json    bool
		wantOut string
		wantErr string
	}{
		{
			name:    "ok",
			body:    `{"events":12,"head_seq":12,"ok":true}`,
			wantOut: "journal ok: 12 events, head seq 12\n",
		},
		{
			name:    "ok, with events waiting to be chained",
			body:    `{"events":12,"head_seq":12,"ok":true,"pending":3}`,
			wantOut: "journal ok: 12 events, head seq 12\n3 events committed and waiting to be chained (the sequencer or the sweep chains them)\n",
		},
		{
			name:    "broken",
			body:    `{"events":6,"head_seq":12,"ok":false,"bad_seq":7,"bad_event_id":"ev_7","reason":"hash mismatch"}`,
			wantOut: "journal BROKEN at seq 7 (event ev_7): hash mismatch\n",
			wantErr: "seq 7",
		},
		{
			name:    "broken, as JSON",
			body:    `{"events":6,"head_seq":12,"ok":false,"bad_seq":7,"bad_event_id":"ev_7","reason":"hash mismatch"}`,
			json:    true,
			wantOut: `"bad_seq": 7`,
			wantErr: "seq 7",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, rec := fakeAPI(t, reply{http.StatusOK, tc.body})
			args := []string{"admin", "journal", "verify"}
			if tc.json {
				args = append([]string{"--json"}, args...)
			}
			res := runCLI(t, envFor(url), "", args...)
			if reqs := rec.all(); len(reqs) != 1 || reqs[0].Method != http.MethodGet || reqs[0].Path != "/v1/admin/journal/verify" {
				t.Fatalf("requests = %+v, want one GET /v1/admin/journal/verify", reqs)
			}
			if tc.wantErr == "" && res.err != nil {
				t.Fatalf("err = %v, want nil", res.err)
			}
			if tc.wantErr != "" && (res.err == nil || !strings.Contains(res.err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want it to contain %q", res.err, tc.wantErr)
			}
			if !strings.Contains(res.stdout, tc.wantOut) {
				t.Errorf("stdout = %q, want it to contain %q", res.stdout, tc.wantOut)
			}
		})
	}
}
