package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fault tests run oml-load on three replicas of one database and
// store and inject a fault in the middle of it: a replica killed with
// SIGKILL, every database connection cut (what a Postgres restart looks
// like from the replicas; the test cluster is shared, so a proxy stands
// in for the restart), the object store cut. oml-load retries each
// operation on the next replica with the same idempotency key or upload
// session, and afterwards checks that every acknowledged write is present
// exactly once and the journal verifies. Each is bounded (a 24 s run).

// kill9 kills the server process outright, as a crash would.
func (s *server) kill9(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.done
	s.cmd = nil
}

// setEnv replaces (or adds) one NAME=value in the server's environment.
func (s *server) setEnv(name, value string) {
	for i, kv := range s.env {
		if strings.HasPrefix(kv, name+"=") {
			s.env[i] = name + "=" + value
			return
		}
	}
	s.env = append(s.env, name+"="+value)
}

// loadInBackground runs oml-load for d and returns its result on the
// channel when it ends.
func loadInBackground(t testing.TB, admin string, urls []string, args ...string) <-chan loadOutcome {
	ch := make(chan loadOutcome, 1)
	go func() {
		res, out, err := runLoad(t, admin, urls, args...)
		ch <- loadOutcome{res, err, out}
	}()
	return ch
}

type loadOutcome struct {
	res loadResult
	err error
	out string
}

// cleanRun insists on a run that lost and duplicated nothing, whose
// journal verifies and whose operations all ended answered.
func cleanRun(t testing.TB, lo loadOutcome) {
	t.Helper()
	c := lo.res.Check
	if lo.err != nil || lo.res.Errors != 0 || !c.JournalOK || len(c.Lost)+len(c.Duplicated)+len(c.NotPromoted)+len(c.UploadsLost) > 0 {
		t.Fatalf("oml-load (%v):\n%s", lo.err, lo.out)
	}
	if c.Remembered == 0 || c.Approved == 0 {
		t.Fatalf("the run wrote too little: %+v", c)
	}
	retried := 0
	for _, op := range lo.res.Ops {
		retried += op.Retried
	}
	t.Logf("%d remembers, %d approvals, %d uploads acknowledged; %d present unacknowledged; %d operations retried",
		c.Remembered, c.Approved, c.Uploads, c.Unacknowledged, retried)
}

func waitReady(t testing.TB, s *server, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := s.do(t, "GET", "/readyz", "", nil)
		if r.Status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz stayed %d %s, want %d", r.Status, r.Body, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFaultKillReplica: a replica is killed with SIGKILL in the middle of
// submissions, verdicts and uploads, and started again later; the load
// goes on on the other two.
func TestFaultKillReplica(t *testing.T) {
	t.Parallel()
	// A part's lease outlives its killed writer by at most 20 s, inside
	// oml-load's retry budget.
	s := startServer(t, "OML_REPLICAS=3", "OML_UPLOAD_LEASE_TTL=20s")
	r1, r2 := s.replica(t), s.replica(t)
	run := loadInBackground(t, s.AdminKey, []string{s.URL, r1.URL, r2.URL}, "-duration", "24s", "-concurrency", "6")
	time.Sleep(8 * time.Second)
	r2.kill9(t)
	time.Sleep(6 * time.Second)
	r2.launch(t)
	cleanRun(t, <-run)
}

// TestFaultDatabaseCut: every database connection is cut for 3 s under
// load (a Postgres restart, as the replicas see it): /readyz answers 503
// until the database is back, the replicas reconnect, and the load's
// writes are retried through it.
func TestFaultDatabaseCut(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(os.Getenv("OML_TEST_DATABASE_URL"))
	if err != nil || u.Host == "" {
		t.Fatalf("OML_TEST_DATABASE_URL %q: run the tests with make test", os.Getenv("OML_TEST_DATABASE_URL"))
	}
	proxy := newTCPProxy(t, u.Host)
	s := startServer(t, "OML_REPLICAS=3")
	s.stop(t)
	via, _ := url.Parse(s.DBURL)
	via.Host = proxy.addr
	s.setEnv("OML_DATABASE_URL", via.String())
	s.launch(t)
	r1, r2 := s.replica(t), s.replica(t)
	run := loadInBackground(t, s.AdminKey, []string{s.URL, r1.URL, r2.URL}, "-duration", "24s", "-concurrency", "6")
	time.Sleep(8 * time.Second)
	proxy.setDown(true)
	waitReady(t, r1, 503)
	time.Sleep(3 * time.Second)
	proxy.setDown(false)
	for _, r := range []*server{s, r1, r2} {
		waitReady(t, r, 200)
	}
	cleanRun(t, <-run)
}

// TestFaultStoreCut: the object store is cut for 3 s under an upload-heavy
// load: /readyz answers 503, parts are refused retryable and nothing is
// recorded, and every upload resumes when the store is back.
func TestFaultStoreCut(t *testing.T) {
	t.Parallel()
	proxy := newTCPProxy(t, strings.TrimPrefix(os.Getenv("OML_TEST_S3_ENDPOINT"), "http://"))
	s := startServer(t, "OML_REPLICAS=3")
	s.stop(t)
	s.setEnv("OML_BLOB_STORE", "s3://"+s.Bucket+"?endpoint=http://"+proxy.addr+"&region=us-east-1")
	s.launch(t)
	r1, r2 := s.replica(t), s.replica(t)
	run := loadInBackground(t, s.AdminKey, []string{s.URL, r1.URL, r2.URL}, "-duration", "24s", "-concurrency", "6",
		"-mix", "recall=20,remember=20,review=20,upload=40")
	time.Sleep(8 * time.Second)
	proxy.setDown(true)
	waitReady(t, s, 503)
	time.Sleep(3 * time.Second)
	proxy.setDown(false)
	waitReady(t, s, 200)
	lo := <-run
	cleanRun(t, lo)
	if lo.res.Check.Uploads == 0 {
		t.Fatalf("no upload acknowledged:\n%s", lo.out)
	}
}

// TestFaultWaitReconnect: an agent parked in inbox_wait on a replica that
// is stopped gets its (empty) answer at once, asks again on another
// replica, and is woken there when the human answers on a third.
func TestFaultWaitReconnect(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	doomed := s.replica(t)
	doomed.setEnv("OML_DRAIN_DELAY", "1s")
	doomed.restart(t)
	other := s.replica(t)

	onDoomed := doomed.mcpSession(t, tm.writer.Token, "2025-11-25")
	q := toolJSON[struct {
		QuestionID string `json:"question_id"`
	}](t, onDoomed, "question_post", map[string]any{"workarea": tm.crew.ID, "body": "Which port?", "options": []string{"Accra", "Tema"}})
	seen := toolJSON[inboxPage](t, onDoomed, "inbox_read", map[string]any{"workarea": tm.crew.ID})
	wait := func(cs *mcp.ClientSession) <-chan string {
		ch := make(chan string, 1)
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "inbox_wait",
				Arguments: map[string]any{"workarea": tm.crew.ID, "since": seen.NextSince, "wait_seconds": 30}})
			body, _ := json.Marshal(res)
			ch <- fmt.Sprint(err, string(body))
		}()
		return ch
	}
	first := wait(onDoomed)
	doomed.waitMetric(t, "the wait parked", "oml_long_polls_waiting", func(v float64) bool { return v >= 1 }, "kind", "inbox_wait")
	stopped := make(chan struct{})
	go func() { doomed.stop(t); close(stopped) }()
	select {
	case got := <-first:
		if strings.Contains(got, "Accra") {
			t.Fatalf("the wait on the stopped replica found an answer: %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the parked wait did not return when its replica stopped")
	}
	// The client asks again, on another replica.
	onOther := other.mcpSession(t, tm.writer.Token, "2025-11-25")
	second := wait(onOther)
	other.waitMetric(t, "the wait parked again", "oml_long_polls_waiting", func(v float64) bool { return v >= 1 }, "kind", "inbox_wait")
	if r := s.do(t, "POST", "/v1/inbox/"+q.QuestionID+"/answer", s.AdminKey, map[string]any{"body": "Accra"}); r.Status != 200 {
		t.Fatalf("the answer: %d %s", r.Status, r.Body)
	}
	select {
	case got := <-second:
		if !strings.Contains(got, "Accra") {
			t.Fatalf("the reconnected wait woke with %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reconnected wait was not woken")
	}
	<-stopped
}
