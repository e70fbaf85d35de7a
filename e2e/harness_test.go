package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/pgtest"
)

// bins are the binaries under test, built once by TestMain.
var bins struct{ server, cli, load string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "oml-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.server = filepath.Join(dir, "oml-server")
	bins.cli = filepath.Join(dir, "oml")
	bins.load = filepath.Join(dir, "oml-load")
	for out, pkg := range map[string]string{bins.server: "./cmd/oml-server", bins.cli: "./cmd/oml", bins.load: "./cmd/oml-load"} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = ".."
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: build %s: %v\n", pkg, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer collects a process's output safely.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is one running oml-server on its own database.
type server struct {
	URL      string
	DBURL    string
	TenantID string
	RootID   string
	AdminKey string
	Bucket   string // the server's S3 bucket
	env      []string
	cache    string
	cmd      *exec.Cmd
	logs     *syncBuffer
	done     chan error
}

func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServer migrates a fresh database, bootstraps tenant "acme" and
// serves (extraEnv adds NAME=value settings); the server is stopped with
// SIGTERM when t ends and must exit cleanly.
func startServer(t testing.TB, extraEnv ...string) *server {
	t.Helper()
	s := &server{DBURL: pgtest.NewURL(t), logs: &syncBuffer{}, done: make(chan error, 1)}
	addr := freePort(t)
	s.URL = "http://" + addr
	keys := filepath.Join(t.TempDir(), "keys")
	s.cache = t.TempDir()
	endpoint := os.Getenv("OML_TEST_S3_ENDPOINT")
	if endpoint == "" {
		t.Fatal("OML_TEST_S3_ENDPOINT is not set: run the tests with `make test`, which starts Versity S3 Gateway (scripts/s3.sh)")
	}
	s.Bucket = "oml-e2e-" + strings.ToLower(ids.Suffix(ids.New(ids.Request)))
	s.env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"OML_DATABASE_URL=" + s.DBURL, "OML_LISTEN=" + addr, "OML_LOG_LEVEL=debug",
		// No load balancer to wait for: stop at once (the drain test sets
		// its own delay).
		"OML_DRAIN_DELAY=0",
		"OML_METRICS_TOKEN=" + metricsToken,
		"OML_BLOB_STORE=s3://" + s.Bucket + "?endpoint=" + endpoint + "&region=us-east-1",
		"AWS_ACCESS_KEY_ID=" + os.Getenv("AWS_ACCESS_KEY_ID"), "AWS_SECRET_ACCESS_KEY=" + os.Getenv("AWS_SECRET_ACCESS_KEY"),
	}, extraEnv...)
	// A small pool for every server of the run (2 finds a request that
	// holds one connection while it waits for another; docs/OPERATIONS.md,
	// "Sizing the pool").
	if v := os.Getenv("OML_TEST_SERVER_DB_MAX_CONNS"); v != "" {
		s.env = append(s.env, "OML_DB_MAX_CONNS="+v)
	}
	out := s.run(t, "keygen", "--dir", keys)
	s.env = append(s.env, strings.Split(strings.TrimSpace(out), "\n")...)
	s.run(t, "migrate")
	var boot struct {
		TenantID       string `json:"tenant_id"`
		RootWorkareaID string `json:"root_workarea_id"`
		AdminKey       string `json:"admin_key"`
	}
	if err := json.Unmarshal([]byte(s.run(t, "bootstrap", "--tenant", "acme")), &boot); err != nil {
		t.Fatalf("bootstrap output: %v", err)
	}
	s.TenantID, s.RootID, s.AdminKey = boot.TenantID, boot.RootWorkareaID, boot.AdminKey

	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			t.Logf("oml-server errors:\n%s", s.errorLines())
		}
		// The gateway keeps what a run stored until it is deleted: without
		// this, repeated runs fill the disk (the upload benchmark alone
		// stores 12 GiB).
		removeBucket(t, endpoint, s.Bucket)
	})
	s.launch(t)
	return s
}

// removeBucket deletes a test server's bucket and everything in it. A
// failure is logged, not fatal: the run's result does not depend on it.
func removeBucket(t testing.TB, endpoint, bucket string) {
	ctx := context.Background()
	c := s3.New(s3.Options{
		BaseEndpoint: aws.String(endpoint), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), ""),
	})
	uploads, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil {
		var missing *types.NoSuchBucket
		if !errors.As(err, &missing) {
			t.Logf("remove bucket %s: %v", bucket, err)
		}
		return
	}
	for _, u := range uploads.Uploads {
		_, _ = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &bucket, Key: u.Key, UploadId: u.UploadId})
	}
	for p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: &bucket}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Logf("remove bucket %s: %v", bucket, err)
			return
		}
		for _, o := range page.Contents {
			if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: o.Key}); err != nil {
				t.Logf("remove bucket %s: %v", bucket, err)
				return
			}
		}
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		t.Logf("remove bucket %s: %v", bucket, err)
	}
}

// errorLines are the server's logged errors, for a failing test's report.
func (s *server) errorLines() string {
	var out []string
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// launch starts `oml-server serve` and waits until it is ready.
func (s *server) launch(t testing.TB) {
	t.Helper()
	s.done = make(chan error, 1)
	s.cmd = exec.Command(bins.server, "serve")
	s.cmd.Env = s.env
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(s.cmd, s.done)
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("oml-server not ready: %v\n%s", err, s.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// restart stops the server gracefully and starts it again on the same
// address, database and store.
func (s *server) restart(t testing.TB) {
	t.Helper()
	s.stop(t)
	s.launch(t)
}

// run runs an oml-server subcommand to completion and returns stdout.
func (s *server) run(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(bins.server, args...)
	cmd.Env = s.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("oml-server %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// stop sends SIGTERM and checks the server shuts down gracefully.
func (s *server) stop(t testing.TB) {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("oml-server exited with %v after SIGTERM\n%s", err, s.logs.String())
		}
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		t.Errorf("oml-server did not stop within 20s of SIGTERM")
	}
	s.cmd = nil
}

// oml runs the CLI against s with key; it returns stdout, stderr and the
// exit error.
func (s *server) oml(t testing.TB, key string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(bins.cli, args...)
	cmd.Env = s.cliEnv(key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// cliEnv is the CLI's environment: the server, the key, and a cache
// directory of the server's own (where `oml attach` remembers sessions).
func (s *server) cliEnv(key string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "XDG_CACHE_HOME=" + s.cache,
		"OML_URL=" + s.URL, "OML_API_KEY=" + key}
}

// mustOML runs the CLI and fails t on a non-zero exit.
func (s *server) mustOML(t testing.TB, key string, args ...string) string {
	t.Helper()
	out, errOut, err := s.oml(t, key, args...)
	if err != nil {
		t.Fatalf("oml %v: %v\n%s%s", args, err, out, errOut)
	}
	return out
}

type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r reply) code() string {
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &env)
	return env.Error.Code
}

// do sends one HTTP request; body may be nil, a string or a value to encode.
func (s *server) do(t testing.TB, method, path, key string, body any, headers ...string) reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

// decode unmarshals a successful reply.
func decode[T any](t testing.TB, r reply, status int) T {
	t.Helper()
	var v T
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return v
}

type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

// mcpSession connects the official MCP Go SDK client in a protocol era.
func (s *server) mcpSession(t testing.TB, key, protocol string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   s.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key: key, base: http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("mcp connect (%s): %v", protocol, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != protocol {
		t.Fatalf("negotiated %s, want %s", got, protocol)
	}
	return cs
}

// callTool calls a tool and returns its structured content and isError.
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) (json.RawMessage, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return b, res.IsError
}

// sql runs one statement on the server's database.
func (s *server) sql(t testing.TB, query string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), s.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), query, args...); err != nil {
		t.Fatal(err)
	}
}

// count runs a counting query on the server's database.
func (s *server) count(t testing.TB, query string, args ...any) int64 {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), s.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// requestIDMember is the request id an error body names (each request's
// own).
var requestIDMember = regexp.MustCompile(`,?"request_id":"req_[0-9A-Z]+"`)

// sameRefusal reports whether two error bodies are the same refusal: equal
// but for the request ids they name (no existence oracle in the rest).
func sameRefusal(a, b []byte) bool {
	return bytes.Equal(requestIDMember.ReplaceAll(a, nil), requestIDMember.ReplaceAll(b, nil))
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
