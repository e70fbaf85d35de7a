package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

const testKey = "oml_test_secret"

// seen is one request as the fake server received it.
type seen struct {
	Method string
	Path   string // escaped, as sent
	Header http.Header
	Body   string
}

// reply is the fake server's canned answer.
type reply struct {
	status int
	body   string
}

// recorder keeps the requests a fake server saw.
type recorder struct {
	mu   sync.Mutex
	reqs []seen
}

func (r *recorder) record(req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, seen{Method: req.Method, Path: req.URL.EscapedPath(), Header: req.Header.Clone(), Body: string(body)})
}

func (r *recorder) all() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.reqs...)
}

// fakeAPI starts a server that answers every request with rep and records it.
func fakeAPI(t *testing.T, rep reply) (string, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, rec
}

// result is what one CLI run produced.
type result struct {
	stdout, stderr string
	err            error
}

// runCLI runs the CLI with env as its environment and stdin as its input.
func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string { return env[k] }
	err := runIO(context.Background(), args, getenv, strings.NewReader(stdin), &stdout, &stderr)
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// envFor is the environment of a CLI pointed at url with the test key.
func envFor(url string) map[string]string {
	return map[string]string{"OML_URL": url, "OML_API_KEY": testKey}
}

// sameJSON reports whether two JSON documents are equal as values.
func sameJSON(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Errorf("body %q is not JSON: %v", got, err)
		return false
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %q is not JSON: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

func TestUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantErr    string
		wantStdout string
		wantStderr string
	}{
		{name: "help", args: []string{"help"}, wantStdout: "admin journal verify"},
		{name: "dash h", args: []string{"-h"}, wantStderr: "workarea create"},
		{name: "no args", args: nil, wantErr: "no command given", wantStderr: "usage: oml"},
		{name: "unknown command", args: []string{"frobnicate"}, wantErr: `unknown command "frobnicate"`, wantStderr: "usage: oml"},
		{name: "unknown subcommand", args: []string{"key", "forge"}, wantErr: `unknown subcommand "forge"`},
		{name: "unknown admin subcommand", args: []string{"admin", "journal", "rewrite"}, wantErr: "want journal verify"},
		{name: "subcommand help", args: []string{"grant", "add", "-h"}, wantStderr: "-scope"},
		{name: "missing required flag", args: []string{"grant", "add", "--key", "key_1"}, wantErr: "--scope are required"},
		{name: "extra argument", args: []string{"workarea", "show", "a", "b"}, wantErr: "want 1 argument(s), got 2"},
		{name: "nothing to set", args: []string{"workarea", "set", "wa_1"}, wantErr: "nothing to change"},
		{name: "bad call arguments", args: []string{"call", "echo", "[1]"}, wantErr: "must be a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// No server: none of these may reach one.
			res := runCLI(t, envFor("http://127.0.0.1:1"), "", tc.args...)
			if tc.wantErr == "" && res.err != nil {
				t.Fatalf("err = %v, want nil", res.err)
			}
			if tc.wantErr != "" && (res.err == nil || !strings.Contains(res.err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want it to contain %q", res.err, tc.wantErr)
			}
			if !strings.Contains(res.stdout, tc.wantStdout) {
				t.Errorf("stdout = %q, want it to contain %q", res.stdout, tc.wantStdout)
			}
			if !strings.Contains(res.stderr, tc.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", res.stderr, tc.wantStderr)
			}
		})
	}
}

func TestMissingKeyFailsBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"whoami"},
		{"key", "list"},
		{"workarea", "show", "universe"},
		{"admin", "journal", "verify"},
		{"tools"},
		{"call", "version"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			t.Parallel()
			url, rec := fakeAPI(t, reply{status: http.StatusOK, body: `{}`})
			res := runCLI(t, map[string]string{"OML_URL": url}, "", args...)
			if res.err == nil || res.err.Error() != "no API key: pass --key or set OML_API_KEY" {
				t.Fatalf("err = %v, want the no-API-key error", res.err)
			}
			if n := len(rec.all()); n != 0 {
				t.Fatalf("server saw %d requests, want none", n)
			}
		})
	}
}

func TestFlagsOverrideEnvironment(t *testing.T) {
	t.Parallel()
	url, rec := fakeAPI(t, reply{status: http.StatusOK, body: `{"key_id":"key_1"}`})
	env := map[string]string{"OML_URL": "http://127.0.0.1:1", "OML_API_KEY": "from-env"}
	res := runCLI(t, env, "", "--url", url+"/", "--key", "from-flag", "whoami")
	if res.err != nil {
		t.Fatalf("err = %v", res.err)
	}
	reqs := rec.all()
	if len(reqs) != 1 || reqs[0].Path != "/v1/whoami" || reqs[0].Header.Get("Authorization") != "Bearer from-flag" {
		t.Fatalf("requests = %+v, want one GET /v1/whoami with the flag's key", reqs)
	}
}

func TestNetworkErrorNamesTheURL(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	res := runCLI(t, envFor(url), "", "whoami")
	if res.err == nil || !strings.Contains(res.err.Error(), url+"/v1/whoami") {
		t.Fatalf("err = %v, want it to name %s/v1/whoami", res.err, url)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	url, _ := fakeAPI(t, reply{status: http.StatusOK, body: `{"version":"v9.9.9","go":"go1.26"}`})
	res := runCLI(t, envFor(url), "", "version")
	if res.err != nil {
		t.Fatalf("err = %v", res.err)
	}
	if !strings.HasPrefix(res.stdout, "oml ") || !strings.Contains(res.stdout, "oml-server v9.9.9") {
		t.Fatalf("stdout = %q, want the CLI's and the server's version", res.stdout)
	}

	// An unreachable server is reported, not failed.
	res = runCLI(t, map[string]string{"OML_URL": url}, "", "version")
	if res.err != nil || !strings.Contains(res.stdout, "not reached: no API key") {
		t.Fatalf("without a key: err = %v, stdout = %q", res.err, res.stdout)
	}
}
