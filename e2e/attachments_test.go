package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"
)

type uploadSession struct {
	UploadSession  string `json:"upload_session"`
	State          string `json:"state"`
	PartSizeBytes  int64  `json:"part_size_bytes"`
	PartsExpected  int    `json:"parts_expected"`
	PartsReceived  int    `json:"parts_received"`
	NextPart       *int   `json:"next_part"`
	UploadPath     string `json:"upload_path"`
	ExpectedDigest string `json:"expected_digest"`
	Reason         string `json:"reason"`
}

func s3Client(t testing.TB) *s3.Client {
	t.Helper()
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(os.Getenv("OML_TEST_S3_ENDPOINT")), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), ""),
	})
}

// objects lists the keys in the server's bucket.
func (s *server) objects(t testing.TB) map[string]int64 {
	t.Helper()
	out, err := s3Client(t).ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &s.Bucket})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]int64{}
	for _, o := range out.Contents {
		keys[aws.ToString(o.Key)] = aws.ToInt64(o.Size)
	}
	return keys
}

func randomFile(t testing.TB, size int) (string, []byte, string) {
	t.Helper()
	data := make([]byte, size)
	_, _ = rand.Read(data)
	path := filepath.Join(t.TempDir(), "quote-AM-7741.bin")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return path, data, hex.EncodeToString(sum[:])
}

func (s *server) openUpload(t testing.TB, key string, size int, digest string, extra ...string) reply {
	t.Helper()
	body := map[string]any{"media_type": "application/octet-stream", "size_bytes": size, "expected_digest": "sha256:" + digest, "part_size_bytes": 5 << 20}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i]] = extra[i+1]
	}
	return s.do(t, "POST", "/v1/attachments/uploads", key, body)
}

func (s *server) putPart(t testing.TB, key, session string, n int, body []byte, headers ...string) reply {
	t.Helper()
	return s.do(t, "PUT", fmt.Sprintf("/v1/attachments/uploads/%s/parts/%d", session, n), key, body, headers...)
}

// A 50 MiB file uploaded by `oml attach`, interrupted after two parts, the
// server restarted, resumed by running `oml attach` again, bound by
// oml_remember, served to a reviewer with its review material, downloaded
// byte-identical by a reader after promotion; the stored object is
// ciphertext under an opaque name, and erasing the claim shreds it.
func TestAttachmentResumableLifecycle(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_EXPIRY_INTERVAL=200ms")
	tm := newTeam(t, s)
	path, data, digest := randomFile(t, 50<<20)

	// First run, at 10 MiB/s, stopped (as by Ctrl-C) once two parts are in.
	first := exec.Command(bins.cli, "attach", path, "--limit-rate", "10485760", "--media-type", "application/octet-stream")
	first.Env = s.cliEnv(tm.writer.Token)
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.count(t, `SELECT count(*) FROM attachments.sessions WHERE parts_received >= 2`) == 0 {
		if time.Now().After(deadline) {
			_ = first.Process.Kill()
			t.Fatalf("two parts never arrived: %s", firstErr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = first.Process.Signal(syscall.SIGINT)
	if err := first.Wait(); err == nil {
		t.Fatal("the interrupted upload exited 0")
	}
	if !strings.Contains(firstErr.String(), "run the same command again to resume") {
		t.Fatalf("interrupted run said: %s", firstErr.String())
	}
	var sessionID string
	var received int
	s.scan(t, `SELECT id, parts_received FROM attachments.sessions`, &sessionID, &received)
	if received < 2 || received >= 7 {
		t.Fatalf("after the interruption: %s %d", sessionID, received)
	}

	s.restart(t)

	out, errOut, err := s.oml(t, tm.writer.Token, "--json", "attach", path, "--media-type", "application/octet-stream", "--no-progress")
	if err != nil {
		t.Fatalf("resumed attach: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, fmt.Sprintf("resuming upload session %s at part %d", sessionID, received+1)) {
		t.Fatalf("second run did not resume %s at part %d: %s", sessionID, received+1, errOut)
	}
	var ses uploadSession
	if err := json.Unmarshal([]byte(out), &ses); err != nil || ses.UploadSession != sessionID || ses.State != "complete" || ses.PartsReceived != 7 {
		t.Fatalf("completed session: %+v %v", ses, err)
	}

	// The data key now lives only with the blob; the session keeps none.
	if n := s.count(t, `SELECT count(*) FROM attachments.sessions WHERE wrapped_key IS NOT NULL OR hash_state IS NOT NULL`); n != 0 {
		t.Fatal("a completed session kept its wrapped key or running digest")
	}

	// The stored object: one, named by neither the file name nor the
	// digest, ciphertext throughout.
	objs := s.objects(t)
	if len(objs) != 1 {
		t.Fatalf("objects in the bucket: %v", objs)
	}
	for key, size := range objs {
		if strings.Contains(key, "quote") || strings.Contains(key, digest) || !strings.HasPrefix(key, "blobs/"+s.TenantID+"/") {
			t.Fatalf("object key %q reveals the file or its digest", key)
		}
		if size != int64(len(data))+int64((len(data)+65535)/65536)*16 {
			t.Fatalf("object is %d bytes, want plaintext plus one tag per 64 KiB segment", size)
		}
		got, err := s3Client(t).GetObject(context.Background(), &s3.GetObjectInput{Bucket: &s.Bucket, Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		stored, _ := io.ReadAll(got.Body)
		got.Body.Close()
		for off := 0; off+32 <= len(data); off += len(data) / 97 {
			if bytes.Contains(stored, data[off:off+32]) {
				t.Fatalf("plaintext window at %d found in the stored object", off)
			}
		}
	}

	// Bound by oml_remember, served to the reviewer with its material.
	cs := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	rem := toolJSON[struct {
		ArtifactID       string `json:"artifact_id"`
		AttachmentsBound int    `json:"attachments_bound"`
	}](t, cs, "oml_remember", map[string]any{
		"workarea": tm.crew.ID, "claim_key": "quote-am-7741", "text": "Accra Metals quote AM-7741, scanned original attached.",
		"attachments": []map[string]string{{"upload_session": sessionID}},
	})
	if rem.AttachmentsBound != 1 {
		t.Fatalf("remember: %+v", rem)
	}
	download := "/v1/artifacts/" + rem.ArtifactID + "/attachments/" + digest
	if r := s.do(t, "GET", download, tm.reader.Token, nil); r.Status != 404 {
		t.Fatalf("a reader downloaded a held claim's attachment: %d", r.Status)
	}
	r := s.do(t, "POST", "/v1/reviews/serve", tm.reviewer.Token, nil)
	srv := decode[servedAttachments](t, r, 200)
	if len(srv.Item.AttachmentReview) != 1 {
		t.Fatalf("served item: %s", r.Body)
	}
	if a := srv.Item.AttachmentReview[0]; a.SHA256 != digest || a.Review != "opaque" || a.Note == "" || a.SizeBytes != int64(len(data)) ||
		a.Provenance.UploadSession != sessionID || a.Provenance.UploadedBy != tm.writer.KeyID {
		t.Fatalf("review material: %+v", a)
	}
	// The served reviewer may read it while it is held, ranges included.
	part := s.do(t, "GET", download, tm.reviewer.Token, nil, "Range", "bytes=8388600-8388700")
	if part.Status != 206 || !bytes.Equal(part.Body, data[8388600:8388701]) {
		t.Fatalf("range read: %d, %d bytes", part.Status, len(part.Body))
	}
	decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, srv.ServeID, "approve"), 200)

	// A reader downloads it byte-identical once promoted.
	full := s.do(t, "GET", download, tm.reader.Token, nil)
	if full.Status != 200 || !bytes.Equal(full.Body, data) || full.Header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("download: %d, %d bytes, %s", full.Status, len(full.Body), full.Header.Get("Content-Type"))
	}

	// Erasing the only claim that carries it shreds it.
	s.mustOML(t, s.AdminKey, "artifact", "erase", rem.ArtifactID, "--reason", "withdrawn by supplier")
	if n := s.count(t, `SELECT count(*) FROM attachments.blobs`); n != 0 {
		t.Fatal("the wrapped data key outlived the erasure")
	}
	if n := s.count(t, `SELECT count(*) FROM attachments.sessions WHERE cardinality(part_sha256) > 0`); n != 0 {
		t.Fatal("the erased content's part digests outlived it")
	}
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE event_type = 'attachment.shred'`); n != 1 {
		t.Fatalf("shred journalled %d times", n)
	}
	deadline = time.Now().Add(15 * time.Second)
	for len(s.objects(t)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("object still stored after erasure: %v", s.objects(t))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r := s.do(t, "GET", download, tm.reader.Token, nil); r.Status != 404 {
		t.Fatalf("download after erasure: %d", r.Status)
	}
}

// servedAttachments is a served item with its attachments' review material.
type servedAttachments struct {
	ServeID string `json:"serve_id"`
	Item    struct {
		ArtifactID       string `json:"artifact_id"`
		AttachmentReview []struct {
			SHA256    string `json:"sha256"`
			Review    string `json:"review"`
			Text      string `json:"text"`
			Note      string `json:"note"`
			SizeBytes int64  `json:"size_bytes"`
			Findings  []struct {
				Rule string `json:"rule"`
			} `json:"findings"`
			Provenance struct {
				UploadSession string `json:"upload_session"`
				UploadedBy    string `json:"uploaded_by"`
			} `json:"provenance"`
		} `json:"attachment_review"`
	} `json:"item"`
}

// Refusals: every one typed, none changing the session.
func TestUploadRefusals(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_MAX_UPLOAD_BYTES=20971520", "OML_MAX_OPEN_UPLOADS=6")
	tm := newTeam(t, s)
	size := 6 << 20
	_, data, digest := randomFile(t, size)
	p1, p2 := data[:5<<20], data[5<<20:]
	status := func(id string) uploadSession {
		r := s.do(t, "GET", "/v1/attachments/uploads/"+id, tm.writer.Token, nil)
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("status answer cacheable: %q", r.Header.Get("Cache-Control"))
		}
		return decode[uploadSession](t, r, 200)
	}

	ses := decode[uploadSession](t, s.openUpload(t, tm.writer.Token, size, digest), 201)
	if ses.PartsExpected != 2 || ses.NextPart == nil || *ses.NextPart != 1 || !strings.HasSuffix(ses.UploadPath, "/parts/{part_number}") {
		t.Fatalf("opened: %+v", ses)
	}
	id := ses.UploadSession
	for _, c := range []struct {
		name    string
		n       int
		body    []byte
		headers []string
		status  int
		code    string
	}{
		{"out of order", 2, p2, nil, 409, "upload.out_of_order"},
		{"part 0", 0, p1, nil, 400, "upload.part_range"},
		{"beyond the last", 3, p2, nil, 400, "upload.part_range"},
		{"oversize", 1, append(bytes.Clone(p1), 'x'), nil, 413, "limit.size"},
		{"short", 1, p1[:100], nil, 400, "upload.part_size"},
		{"Content-Digest mismatch", 1, p1, []string{"Content-Digest", "sha-256=:" + base64.StdEncoding.EncodeToString(make([]byte, 32)) + ":"}, 400, "upload.part_integrity"},
		{"Content-MD5 mismatch", 1, p1, []string{"Content-MD5", base64.StdEncoding.EncodeToString(make([]byte, 16))}, 400, "upload.part_integrity"},
	} {
		r := s.putPart(t, tm.writer.Token, id, c.n, c.body, c.headers...)
		if r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
		if got := status(id); got.PartsReceived != 0 || got.State != "open" {
			t.Fatalf("%s changed the session: %+v", c.name, got)
		}
	}
	// Another key, another tenant: the session does not exist for them.
	other := s.bootstrapTenant(t, "beta")
	for _, key := range []string{tm.author2.Token, other} {
		if r := s.putPart(t, key, id, 1, p1); r.Status != 404 || r.code() != "access.not_found" {
			t.Errorf("foreign part: %d %s", r.Status, r.Body)
		}
		if r := s.do(t, "GET", "/v1/attachments/uploads/"+id, key, nil); r.Status != 404 {
			t.Errorf("foreign status: %d", r.Status)
		}
	}

	// Part 1 twice at once: stored once; then the same bytes again are an
	// idempotent success and other bytes a conflict.
	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Go(func() { codes[i] = s.putPart(t, tm.writer.Token, id, 1, p1).Status })
	}
	wg.Wait()
	for _, c := range codes {
		if c != 200 && c != 409 {
			t.Fatalf("concurrent part 1: %v", codes)
		}
	}
	if got := status(id); got.PartsReceived != 1 {
		t.Fatalf("after concurrent part 1: %+v", got)
	}
	if r := s.putPart(t, tm.writer.Token, id, 1, p1); r.Status != 200 {
		t.Fatalf("repeat of part 1: %d %s", r.Status, r.Body)
	}
	flipped := bytes.Clone(p1)
	flipped[7] ^= 1
	if r := s.putPart(t, tm.writer.Token, id, 1, flipped); r.Status != 409 || r.code() != "upload.part_conflict" {
		t.Fatalf("part 1 with other bytes: %d %s", r.Status, r.Body)
	}

	// A wrong expected digest: the last part aborts the session and
	// oml_remember refuses it.
	wrong := strings.Repeat("ab", 32)
	bad := decode[uploadSession](t, s.openUpload(t, tm.writer.Token, size, wrong), 201)
	if r := s.putPart(t, tm.writer.Token, bad.UploadSession, 1, p1); r.Status != 200 {
		t.Fatal(string(r.Body))
	}
	r := s.putPart(t, tm.writer.Token, bad.UploadSession, 2, p2)
	if r.Status != 409 || r.code() != "upload.digest_mismatch" {
		t.Fatalf("wrong digest: %d %s", r.Status, r.Body)
	}
	if got := decode[uploadSession](t, s.do(t, "GET", "/v1/attachments/uploads/"+bad.UploadSession, tm.writer.Token, nil), 200); got.State != "aborted" {
		t.Fatalf("after the mismatch: %+v", got)
	}
	if r := s.putPart(t, tm.writer.Token, bad.UploadSession, 2, p2); r.Status != 409 || r.code() != "upload.closed" {
		t.Fatalf("part after abort: %d %s", r.Status, r.Body)
	}
	_, body := toolError(t, s.mcpSession(t, tm.writer.Token, "2025-11-25"), "oml_remember", map[string]any{
		"workarea": tm.crew.ID, "claim_key": "bad", "text": "x", "attachments": []map[string]string{{"upload_session": bad.UploadSession}},
	})
	if !strings.Contains(string(body), "submission.upload_unusable") || !strings.Contains(string(body), "digest mismatch") {
		t.Fatalf("remember with the mismatched session: %s", body)
	}
	// An incomplete session is refused too.
	r = s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{
		"workarea": tm.crew.ID, "claim_key": "incomplete", "text": "x", "attachments": []map[string]string{{"upload_session": id}},
	})
	if r.code() != "submission.upload_unusable" {
		t.Fatalf("remember with an open session: %d %s", r.Status, r.Body)
	}

	// Limits: the tenant's size ceiling and open sessions per key.
	if r := s.openUpload(t, tm.writer.Token, 21<<20, digest); r.Status != 413 || r.code() != "limit.size" {
		t.Fatalf("over the ceiling: %d %s", r.Status, r.Body)
	}
	for i := 0; ; i++ {
		r := s.openUpload(t, tm.writer.Token, size, digest)
		if r.Status == 201 {
			continue
		}
		if r.Status != 429 || r.code() != "limit.quota" || r.Header.Get("Retry-After") == "" || i != 5 {
			t.Fatalf("open #%d: %d %s", i+2, r.Status, r.Body)
		}
		break
	}
	// Aborting frees a slot; an aborted session takes no parts.
	if r := s.do(t, "DELETE", "/v1/attachments/uploads/"+id, tm.writer.Token, nil); r.Status != 200 {
		t.Fatal(string(r.Body))
	}
	if got := status(id); got.State != "aborted" || got.NextPart != nil {
		t.Fatalf("after abort: %+v", got)
	}
	if r := s.putPart(t, tm.writer.Token, id, 2, p2); r.code() != "upload.closed" {
		t.Fatalf("part after abort: %d %s", r.Status, r.Body)
	}
	decode[uploadSession](t, s.openUpload(t, tm.writer.Token, size, digest), 201)
	// A reader key opens nothing.
	if r := s.openUpload(t, tm.reader.Token, size, digest); r.Status != 403 {
		t.Fatalf("reader opened a session: %d %s", r.Status, r.Body)
	}
	// Malformed opens.
	for _, body := range []map[string]any{
		{"media_type": "application/pdf", "size_bytes": 10, "expected_digest": "md5:abc"},
		{"media_type": "nonsense", "size_bytes": 10, "expected_digest": "sha256:" + digest},
		{"media_type": "application/pdf", "size_bytes": -1, "expected_digest": "sha256:" + digest},
		{"media_type": "application/pdf", "size_bytes": 10, "expected_digest": "sha256:" + digest, "part_size_bytes": 1000},
		{"media_type": "application/pdf", "size_bytes": "10", "expected_digest": "sha256:" + digest},
		{"media_type": "application/pdf", "size_bytes": 10, "expected_digest": "sha256:" + digest, "file_name": "x"},
	} {
		if r := s.do(t, "POST", "/v1/attachments/uploads", tm.writer.Token, body); r.Status != 400 {
			t.Errorf("open %v: %d %s", body, r.Status, r.Body)
		}
	}
}

// An open session past its expiry takes no parts; the sweeper marks it
// expired and abandons its multipart upload in the store.
func TestUploadExpiry(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_UPLOAD_TTL=1s", "OML_EXPIRY_INTERVAL=200ms")
	tm := newTeam(t, s)
	_, data, digest := randomFile(t, 6<<20)
	ses := decode[uploadSession](t, s.openUpload(t, tm.writer.Token, len(data), digest), 201)
	if r := s.putPart(t, tm.writer.Token, ses.UploadSession, 1, data[:5<<20]); r.Status != 200 {
		t.Fatal(string(r.Body))
	}
	time.Sleep(1200 * time.Millisecond)
	if r := s.putPart(t, tm.writer.Token, ses.UploadSession, 2, data[5<<20:]); r.Status != 410 && r.code() != "upload.closed" {
		t.Fatalf("part after expiry: %d %s", r.Status, r.Body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.count(t, `SELECT count(*) FROM attachments.sessions WHERE state = 'expired'`) != 1 ||
		s.count(t, `SELECT count(*) FROM attachments.doomed`) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the sweeper did not expire the session and abandon its upload")
		}
		time.Sleep(100 * time.Millisecond)
	}
	uploads, err := s3Client(t).ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: &s.Bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(uploads.Uploads) != 0 {
		t.Fatalf("multipart uploads left: %d", len(uploads.Uploads))
	}
}

// The store going away mid-upload is a retryable typed error; the session
// resumes when it is back.
func TestUploadStoreOutage(t *testing.T) {
	t.Parallel()
	proxy := newTCPProxy(t, strings.TrimPrefix(os.Getenv("OML_TEST_S3_ENDPOINT"), "http://"))
	s := startServer(t)
	// Point a second server process at the proxy instead of the store.
	s.stop(t)
	for i, kv := range s.env {
		if strings.HasPrefix(kv, "OML_BLOB_STORE=") {
			s.env[i] = "OML_BLOB_STORE=s3://" + s.Bucket + "?endpoint=http://" + proxy.addr + "&region=us-east-1"
		}
	}
	s.launch(t)
	tm := newTeam(t, s)
	_, data, digest := randomFile(t, 6<<20)
	ses := decode[uploadSession](t, s.openUpload(t, tm.writer.Token, len(data), digest), 201)
	if r := s.putPart(t, tm.writer.Token, ses.UploadSession, 1, data[:5<<20]); r.Status != 200 {
		t.Fatal(string(r.Body))
	}
	proxy.setDown(true)
	r := s.putPart(t, tm.writer.Token, ses.UploadSession, 2, data[5<<20:])
	if r.Status != 503 || r.code() != "service.unavailable" || !strings.Contains(string(r.Body), `"retryable":true`) {
		t.Fatalf("part with the store down: %d %s", r.Status, r.Body)
	}
	if got := decode[uploadSession](t, s.do(t, "GET", "/v1/attachments/uploads/"+ses.UploadSession, tm.writer.Token, nil), 200); got.PartsReceived != 1 || got.State != "open" {
		t.Fatalf("session after the outage: %+v", got)
	}
	// Readiness follows the store (within the second probes share): a
	// load balancer takes the replica out.
	waitReady(t, s, 503)
	if r := s.do(t, "GET", "/readyz", "", nil); r.Status != 503 || !strings.Contains(string(r.Body), "blob store unreachable") {
		t.Fatalf("/readyz with the store down: %d %s", r.Status, r.Body)
	}
	proxy.setDown(false)
	waitReady(t, s, 200)
	done := decode[uploadSession](t, s.putPart(t, tm.writer.Token, ses.UploadSession, 2, data[5<<20:]), 200)
	if done.State != "complete" {
		t.Fatalf("after the store came back: %+v", done)
	}
}

// tcpProxy forwards to an address until it is set down, when it drops
// every connection and refuses new ones.
type tcpProxy struct {
	addr string
	mu   sync.Mutex
	down bool
	open []net.Conn
}

func newTCPProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{addr: ln.Addr().String()}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.down {
				p.mu.Unlock()
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.open = append(p.open, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

func (p *tcpProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for _, c := range p.open {
			c.Close()
		}
		p.open = nil
	}
}

// scan reads one row of a query into dst.
func (s *server) scan(t testing.TB, query string, dst ...any) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), s.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), query).Scan(dst...); err != nil {
		t.Fatal(err)
	}
}

// bootstrapTenant creates another tenant in the server's database and
// returns its admin key.
func (s *server) bootstrapTenant(t testing.TB, name string) string {
	t.Helper()
	var boot struct {
		AdminKey string `json:"admin_key"`
	}
	if err := json.Unmarshal([]byte(s.run(t, "bootstrap", "--tenant", name)), &boot); err != nil {
		t.Fatal(err)
	}
	return boot.AdminKey
}

// What a reviewer reads: extracted text for markdown and PDF attachments
// (scanned like the claim's text), provenance for opaque ones; the same
// content uploaded twice is stored once.
func TestAttachmentReviewMaterial(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.md")
	secret := "AKIA" + "ABCDEFGHIJKLMNOP"
	if err := os.WriteFile(notes, []byte("# Call notes\nAccra Metals will hold the price. Portal key "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pdf, err := filepath.Abs(filepath.Join("testdata", "quote.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	attach := func(path, media string) string {
		out := s.mustOML(t, tm.writer.Token, "--json", "attach", path, "--media-type", media, "--no-progress")
		var ses uploadSession
		if err := json.Unmarshal([]byte(out), &ses); err != nil || ses.State != "complete" {
			t.Fatalf("attach %s: %s", path, out)
		}
		return ses.UploadSession
	}
	mdSession, pdfSession := attach(notes, "text/markdown"), attach(pdf, "application/pdf")
	// The same PDF again: a second session, one stored object.
	again := attach(pdf, "application/pdf")
	if again == pdfSession || len(s.objects(t)) != 2 {
		t.Fatalf("the same content was stored twice: %v", s.objects(t))
	}
	r := s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{
		"workarea": tm.crew.ID, "claim_key": "call", "text": "Call with Accra Metals; notes and quote attached.",
		"attachments": []map[string]string{{"upload_session": mdSession}, {"upload_session": pdfSession}},
	})
	decode[remembered](t, r, 201)
	r = s.do(t, "POST", "/v1/reviews/serve", tm.reviewer.Token, nil)
	srv := decode[servedAttachments](t, r, 200)
	kinds := map[string]string{}
	flagged := 0
	for _, a := range srv.Item.AttachmentReview {
		kinds[a.Review] = a.Text
		flagged += len(a.Findings)
	}
	if !strings.Contains(kinds["text"], "hold the price") || !strings.Contains(kinds["pdf_text"], "412 USD per tonne") {
		t.Fatalf("review material: %s", r.Body)
	}
	if flagged != 1 {
		t.Fatalf("the secret in the notes was not flagged once: %s", r.Body)
	}
	// A session binds once.
	r = s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{
		"workarea": tm.crew.ID, "claim_key": "call-2", "text": "x", "attachments": []map[string]string{{"upload_session": mdSession}},
	})
	if r.code() != "submission.upload_unusable" || !strings.Contains(string(r.Body), "binds once") {
		t.Fatalf("second binding: %d %s", r.Status, r.Body)
	}
}

// A tenant's admin lowers its own attachment size ceiling: uploads above
// it are refused with limit.size, other tenants keep the deployment's, and
// only tenant admins may change it, never above the deployment's.
func TestTenantSizeCeiling(t *testing.T) {
	t.Parallel()
	const deployment = 20 << 20
	s := startServer(t, fmt.Sprintf("OML_MAX_UPLOAD_BYTES=%d", deployment))
	tm := newTeam(t, s)
	other := s.bootstrapTenant(t, "beta")
	type limits struct {
		Max        int64 `json:"max_upload_bytes"`
		Deployment int64 `json:"deployment_max_upload_bytes"`
		TenantSet  bool  `json:"tenant_set"`
	}
	get := func(key string) limits {
		return decode[limits](t, s.do(t, "GET", "/v1/attachments/limits", key, nil), 200)
	}
	if l := get(tm.writer.Token); l != (limits{deployment, deployment, false}) {
		t.Fatalf("default limits: %+v", l)
	}
	for _, c := range []struct {
		name   string
		key    string
		body   any
		status int
		code   string
	}{
		{"a writer", tm.writer.Token, map[string]any{"max_upload_bytes": 1 << 20}, 403, "access.verb_ceiling"},
		{"above the deployment", s.AdminKey, map[string]any{"max_upload_bytes": deployment + 1}, 400, "request.validation"},
		{"negative", s.AdminKey, map[string]any{"max_upload_bytes": -1}, 400, "request.validation"},
		{"missing", s.AdminKey, map[string]any{}, 400, "request.validation"},
		{"unknown field", s.AdminKey, map[string]any{"max_upload_bytes": 1 << 20, "per_key": true}, 400, "request.validation"},
		{"wrong type", s.AdminKey, map[string]any{"max_upload_bytes": "1MiB"}, 400, "request.validation"},
	} {
		if r := s.do(t, "PUT", "/v1/attachments/limits", c.key, c.body); r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
	}
	if l := get(tm.writer.Token); l.TenantSet {
		t.Fatalf("a refused change changed the limits: %+v", l)
	}

	// The CLI sets it for admins.
	out, stderr, err := s.oml(t, s.AdminKey, "admin", "upload-limit", strconv.Itoa(1<<20))
	if err != nil || !strings.Contains(out, "1048576 bytes (set for this tenant") {
		t.Fatalf("oml admin upload-limit: %v\n%s%s", err, out, stderr)
	}
	if l := get(tm.writer.Token); l != (limits{1 << 20, deployment, true}) {
		t.Fatalf("set: %+v", l)
	}
	_, _, digest := randomFile(t, 2<<20)
	if r := s.openUpload(t, tm.writer.Token, 2<<20, digest); r.Status != 413 || r.code() != "limit.size" {
		t.Fatalf("2 MiB over a 1 MiB tenant ceiling: %d %s", r.Status, r.Body)
	}
	if r := s.openUpload(t, tm.writer.Token, 1<<20, digest); r.Status != 201 {
		t.Fatalf("1 MiB under a 1 MiB tenant ceiling: %d %s", r.Status, r.Body)
	}
	if l := get(other); l != (limits{deployment, deployment, false}) {
		t.Fatalf("another tenant's limits: %+v", l)
	}

	r := s.do(t, "PUT", "/v1/attachments/limits", s.AdminKey, map[string]any{"max_upload_bytes": 0})
	if l := decode[limits](t, r, 200); l != (limits{deployment, deployment, false}) {
		t.Fatalf("cleared: %+v", l)
	}
	if r := s.openUpload(t, tm.writer.Token, 2<<20, digest); r.Status != 201 {
		t.Fatalf("2 MiB after clearing: %d %s", r.Status, r.Body)
	}
}
