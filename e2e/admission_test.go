package e2e

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omlhub/oml/platform/canonjson"
	"github.com/omlhub/oml/platform/ids"
)

// team is a tenant with a workarea tree and one key per role in the
// admission scenarios.
type team struct {
	s                                 *server
	crew                              workareaInfo
	writer, author2, reviewer, reader issuedKey
}

func newTeam(t testing.TB, s *server) team {
	t.Helper()
	s.createWorkarea(t, "universe", "procurement")
	tm := team{s: s, crew: s.createWorkarea(t, "universe.procurement", "metals-crew", "--status", "committed")}
	// Dreamer keys both write and review: the author must still never be
	// served its own item.
	tm.writer = s.issueKey(t, "writer-1", "dreamer")
	tm.author2 = s.issueKey(t, "writer-2", "dreamer")
	tm.reviewer = s.issueKey(t, "reviewer-1", "dreamer")
	tm.reader = s.issueKey(t, "reader-1", "reader")
	for _, k := range []issuedKey{tm.writer, tm.author2, tm.reviewer} {
		s.grant(t, k.KeyID, "universe.procurement", "reader", "allow")
		s.grant(t, k.KeyID, "universe.procurement", "writer", "allow")
	}
	for _, k := range []issuedKey{tm.reviewer, tm.writer, tm.author2} {
		s.grant(t, k.KeyID, "universe.procurement", "dreamer.review", "allow")
	}
	s.grant(t, tm.reader.KeyID, "universe.procurement", "reader", "allow")
	return tm
}

type remembered struct {
	ArtifactID       string `json:"artifact_id"`
	ClaimKey         string `json:"claim_key"`
	Version          int    `json:"version"`
	Kind             string `json:"kind"`
	State            string `json:"state"`
	Workarea         string `json:"workarea"`
	LineageDeclared  int    `json:"lineage_declared"`
	IdempotentReplay bool   `json:"idempotent_replay"`
}

func toolJSON[T any](t testing.TB, cs *mcp.ClientSession, name string, args any) T {
	t.Helper()
	sc, isErr := callTool(t, cs, name, args)
	if isErr {
		t.Fatalf("%s: %s", name, sc)
	}
	var v T
	if err := json.Unmarshal(sc, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func toolError(t testing.TB, cs *mcp.ClientSession, name string, args any) (string, json.RawMessage) {
	t.Helper()
	sc, isErr := callTool(t, cs, name, args)
	if !isErr {
		t.Fatalf("%s succeeded: %s", name, sc)
	}
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(sc, &env)
	return env.Error.Code, sc
}

type served struct {
	ServeID    string `json:"serve_id"`
	SelfSigned bool   `json:"self_signed"`
	Item       struct {
		ArtifactID string   `json:"artifact_id"`
		Text       string   `json:"text"`
		Lineage    []string `json:"lineage_closure"`
	} `json:"item"`
}

// serve asks for the next item; ok is false on 204.
func (s *server) serve(t testing.TB, key string) (served, bool) {
	t.Helper()
	r := s.do(t, "POST", "/v1/reviews/serve", key, nil)
	if r.Status == 204 {
		return served{}, false
	}
	return decode[served](t, r, 200), true
}

func (s *server) verdict(t testing.TB, key, serveID, verdict string) reply {
	t.Helper()
	return s.do(t, "POST", "/v1/reviews/"+serveID+"/verdict", key, map[string]string{"verdict": verdict, "reason": "checked"})
}

// The acceptance path: held on arrival, invisible to others, served to an
// independent reviewer, promoted by its approval.
func TestRememberReviewPromote(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	writer := s.mcpSession(t, tm.writer.Token, "2026-07-28")
	got := toolJSON[remembered](t, writer, "oml_remember", map[string]any{
		"workarea": tm.crew.ID, "claim_key": "supplier-quote-am-7741",
		"text": "Supplier Accra Metals quoted 412 USD/t for Q1-2027 delivery.",
	})
	if got.State != "held" || got.Version != 1 || got.Workarea != tm.crew.ID || got.IdempotentReplay {
		t.Fatalf("remember: %+v", got)
	}

	// Held: the author sees it; nobody else does, and unknown ids look the same.
	if r := s.do(t, "GET", "/v1/artifacts/"+got.ArtifactID, tm.writer.Token, nil); r.Status != 200 {
		t.Fatalf("author reads own held item: %d %s", r.Status, r.Body)
	}
	missing := s.do(t, "GET", "/v1/artifacts/"+ids.New(ids.Artifact), tm.reader.Token, nil)
	for _, k := range []issuedKey{tm.reader, tm.reviewer, tm.author2} {
		r := s.do(t, "GET", "/v1/artifacts/"+got.ArtifactID, k.Token, nil)
		if r.Status != 404 || !sameRefusal(r.Body, missing.Body) {
			t.Fatalf("held item visible to %s: %d %s", k.KeyID, r.Status, r.Body)
		}
		mine := toolJSON[struct {
			Items []remembered `json:"items"`
		}](t, s.mcpSession(t, k.Token, "2025-11-25"), "oml_my_work", map[string]any{})
		if len(mine.Items) != 0 {
			t.Fatalf("another key's my_work lists %v", mine.Items)
		}
	}

	// Nor in the graph of anyone else; the author's own graph shows it.
	for _, k := range []issuedKey{tm.reader, tm.reviewer} {
		g := toolJSON[graphOut](t, s.mcpSession(t, k.Token, "2025-11-25"), "oml_graph",
			map[string]any{"scope": tm.crew.ID, "roots": []string{got.ArtifactID}})
		if len(g.Claims) != 0 || len(g.Edges) != 0 {
			t.Fatalf("held item in another key's graph: %+v", g)
		}
	}
	if g := toolJSON[graphOut](t, writer, "oml_graph", map[string]any{"scope": tm.crew.ID, "roots": []string{got.ArtifactID}}); len(g.Claims) != 1 {
		t.Fatalf("author's graph: %+v", g)
	}

	// The author, though it holds dreamer.review, is never served its own item.
	if _, ok := s.serve(t, tm.writer.Token); ok {
		t.Fatal("the author was served its own item")
	}
	srv, ok := s.serve(t, tm.reviewer.Token)
	if !ok || srv.Item.ArtifactID != got.ArtifactID || !strings.Contains(srv.Item.Text, "412 USD/t") {
		t.Fatalf("serve: %v %+v", ok, srv)
	}
	// Leased: nobody else is served it meanwhile.
	if _, ok := s.serve(t, tm.author2.Token); ok {
		t.Fatal("a leased item was served twice")
	}
	// A verdict forged by the author on the reviewer's serve is refused.
	if r := s.verdict(t, tm.writer.Token, srv.ServeID, "approve"); r.Status != 404 || r.code() != "access.not_found" {
		t.Fatalf("forged verdict: %d %s", r.Status, r.Body)
	}
	r := s.verdict(t, tm.reviewer.Token, srv.ServeID, "approve")
	v := decode[struct {
		State string `json:"state"`
	}](t, r, 200)
	if v.State != "promoted" {
		t.Fatalf("verdict: %s", r.Body)
	}
	if r := s.verdict(t, tm.reviewer.Token, srv.ServeID, "approve"); r.Status != 409 || r.code() != "review.serve_consumed" {
		t.Fatalf("double verdict: %d %s", r.Status, r.Body)
	}

	// Promoted: readers see it; my_work says so.
	art := decode[struct {
		State     string          `json:"state"`
		Envelope  json.RawMessage `json:"envelope"`
		Signature string          `json:"signature"`
	}](t, s.do(t, "GET", "/v1/artifacts/"+got.ArtifactID, tm.reader.Token, nil), 200)
	if art.State != "promoted" {
		t.Fatalf("reader sees %s", art.State)
	}
	mine := toolJSON[struct {
		Items []remembered `json:"items"`
	}](t, writer, "oml_my_work", map[string]any{"state": "promoted"})
	if len(mine.Items) != 1 || mine.Items[0].ArtifactID != got.ArtifactID {
		t.Fatalf("my_work: %+v", mine)
	}

	// The envelope verifies against the published signing key.
	key := decode[struct {
		PublicKey string `json:"public_key"`
	}](t, s.do(t, "GET", "/v1/signing-key", tm.reader.Token, nil), 200)
	pub, _ := base64.StdEncoding.DecodeString(key.PublicKey)
	sig, _ := base64.StdEncoding.DecodeString(art.Signature)
	canon, err := canonjson.Canonicalize(art.Envelope)
	if err != nil || !ed25519.Verify(pub, canon, sig) {
		t.Fatalf("envelope does not verify: %v", err)
	}
	if out := s.mustOML(t, s.AdminKey, "admin", "journal", "verify"); !strings.Contains(out, "ok") {
		t.Fatalf("journal: %s", out)
	}
}

// R2 over lineage: a reviewer who wrote an ancestor is never served the
// descendant; a late verdict is refused.
func TestReviewIndependenceAndExpiry(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_SERVE_TTL=1s")
	tm := newTeam(t, s)
	// The reviewer writes a memory, which author2 ratifies.
	base := toolJSON[remembered](t, s.mcpSession(t, tm.reviewer.Token, "2025-11-25"), "oml_remember", map[string]any{
		"workarea": tm.crew.ID, "claim_key": "q4-quotes", "text": "Q4 aluminium quotes ranged 398-441 USD/t.",
	})
	srv, ok := s.serve(t, tm.author2.Token)
	if !ok || srv.Item.ArtifactID != base.ArtifactID {
		t.Fatalf("serve base: %v %+v", ok, srv)
	}
	decode[map[string]any](t, s.verdict(t, tm.author2.Token, srv.ServeID, "approve"), 200)

	// The writer learns from it.
	derived := toolJSON[remembered](t, s.mcpSession(t, tm.writer.Token, "2025-11-25"), "oml_learn", map[string]any{
		"workarea": tm.crew.ID, "claim_key": "price-anchor", "text": "Accra Metals is the Q1 price anchor.",
		"derives_from": []string{base.ArtifactID},
	})
	if derived.Kind != "derived_fact" || derived.LineageDeclared != 1 {
		t.Fatalf("learn: %+v", derived)
	}
	// The reviewer wrote the ancestor: never served the descendant.
	if srv, ok := s.serve(t, tm.reviewer.Token); ok {
		t.Fatalf("reviewer served a descendant of its own claim: %+v", srv)
	}
	// author2 is independent, but lets its lease run out.
	srv, ok = s.serve(t, tm.author2.Token)
	if !ok || srv.Item.ArtifactID != derived.ArtifactID || len(srv.Item.Lineage) != 1 {
		t.Fatalf("serve derived: %v %+v", ok, srv)
	}
	time.Sleep(1200 * time.Millisecond)
	if r := s.verdict(t, tm.author2.Token, srv.ServeID, "approve"); r.Status != 410 || r.code() != "review.serve_expired" {
		t.Fatalf("late verdict: %d %s", r.Status, r.Body)
	}
	// The lease is over, so it can be served again, and rejected.
	srv, ok = s.serve(t, tm.author2.Token)
	if !ok || srv.Item.ArtifactID != derived.ArtifactID {
		t.Fatalf("serve again: %v %+v", ok, srv)
	}
	v := decode[struct {
		State string `json:"state"`
	}](t, s.verdict(t, tm.author2.Token, srv.ServeID, "reject"), 200)
	if v.State != "rejected" {
		t.Fatalf("reject: %+v", v)
	}
}

// Held items past their expiry are swept to expired by the server (no read
// needed), read as expired and are never served.
func TestHeldExpiry(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_EXPIRY_INTERVAL=200ms")
	tm := newTeam(t, s)
	r := s.do(t, "PUT", "/v1/workareas/"+tm.crew.ID+"/review-policy", s.AdminKey,
		`{"required_approvals":1,"held_ttl_seconds":1,"scan":"flag"}`)
	if r.Status != 200 {
		t.Fatalf("set policy: %d %s", r.Status, r.Body)
	}
	cs := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	got := toolJSON[remembered](t, cs, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "short-lived", "text": "soon gone"})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if s.count(t, `SELECT count(*) FROM admission.artifacts WHERE state = 'expired'`) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweeper did not expire the item")
		}
	}
	if _, ok := s.serve(t, tm.reviewer.Token); ok {
		t.Fatal("an expired item was served")
	}
	mine := toolJSON[struct {
		Items []remembered `json:"items"`
	}](t, cs, "oml_my_work", map[string]any{})
	if len(mine.Items) != 1 || mine.Items[0].ArtifactID != got.ArtifactID || mine.Items[0].State != "expired" {
		t.Fatalf("my_work after expiry: %+v", mine)
	}
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE event_type = 'lifecycle.expire'`); n != 1 {
		t.Fatalf("%d expiry events", n)
	}
}

// Refusals of the submission pipeline, each typed, none writing anything.
func TestSubmissionRefusals(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	frozen := s.createWorkarea(t, "universe.procurement", "archive", "--status", "validated")
	cs := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	held := toolJSON[remembered](t, s.mcpSession(t, tm.author2.Token, "2025-11-25"), "oml_remember",
		map[string]any{"workarea": tm.crew.ID, "claim_key": "other-held", "text": "someone else's held claim"})
	var other struct {
		RootWorkareaID string `json:"root_workarea_id"`
	}
	_ = json.Unmarshal([]byte(s.run(t, "bootstrap", "--tenant", "globex")), &other)
	before := s.count(t, `SELECT count(*) FROM admission.artifacts`)

	cases := []struct {
		name, tool string
		args       map[string]any
		code       string
	}{
		{"learn without lineage", "oml_learn", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "t", "derives_from": []string{}}, "submission.lineage_required"},
		{"learn from a nonexistent id", "oml_learn", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "t", "derives_from": []string{ids.New(ids.Artifact)}}, "access.not_found"},
		{"learn from another's held item", "oml_learn", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "t", "derives_from": []string{held.ArtifactID}}, "access.not_found"},
		{"validated workarea", "oml_remember", map[string]any{"workarea": frozen.ID, "claim_key": "x", "text": "t"}, "workarea.frozen"},
		{"universe itself", "oml_remember", map[string]any{"workarea": "universe", "claim_key": "x", "text": "t"}, "access.not_found"},
		{"another tenant's workarea", "oml_remember", map[string]any{"workarea": other.RootWorkareaID, "claim_key": "x", "text": "t"}, "access.not_found"},
		{"wrong kind", "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "t", "kind": "rumour"}, "request.validation"},
		{"wrong type", "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": 7, "text": "t"}, "request.validation"},
		{"unknown field", "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "t", "owner": "globex"}, "request.validation"},
		{"field name in capitals", "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "TEXT": "t"}, "request.validation"},
		{"tenant ignored, the rest still checked", "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": " ", "tenant": "globex"}, "request.validation"},
		{"bad claim key", "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "has space", "text": "t"}, "request.validation"},
		{"empty text", "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": " "}, "request.validation"},
		{"text over the limit", "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": strings.Repeat("a", 300<<10)}, "limit.size"},
		{"unknown upload session", "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "t", "attachments": []map[string]string{{"upload_session": ids.New(ids.Upload)}}}, "submission.upload_unusable"},
		{"claim key taken", "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "other-held", "text": "t"}, "submission.claim_key_conflict"},
	}
	var notFound []json.RawMessage
	for _, c := range cases {
		code, body := toolError(t, cs, c.tool, c.args)
		if code != c.code {
			t.Errorf("%s: got %s, want %s: %s", c.name, code, c.code, body)
		}
		if strings.HasPrefix(c.name, "learn from") {
			notFound = append(notFound, body)
		}
	}
	if len(notFound) == 2 && !sameRefusal(notFound[0], notFound[1]) {
		t.Errorf("unreadable and nonexistent lineage targets differ: %s vs %s", notFound[0], notFound[1])
	}
	if after := s.count(t, `SELECT count(*) FROM admission.artifacts`); after != before {
		t.Fatalf("refusals wrote %d artifacts", after-before)
	}
	// Universe itself refuses writes, even to a key that can see it.
	if code, _ := toolError(t, s.mcpSession(t, s.AdminKey, "2025-11-25"), "oml_remember", map[string]any{"workarea": "universe", "claim_key": "x", "text": "t"}); code != "workarea.frozen" {
		t.Fatalf("remember into universe: %s", code)
	}
	// A reader key cannot write where it can read.
	code, _ := toolError(t, s.mcpSession(t, tm.reader.Token, "2025-11-25"), "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "t"})
	if code != "access.denied" {
		t.Fatalf("reader writing: %s", code)
	}
	// Operators have no own-work view.
	op := s.issueKey(t, "ops", "operator")
	if code, _ := toolError(t, s.mcpSession(t, op.Token, "2025-11-25"), "oml_my_work", map[string]any{}); code != "access.verb_ceiling" {
		t.Fatalf("operator my_work: %s", code)
	}
}

// Fifty concurrent identical remembers under one key make one claim.
func TestRememberIdempotent(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	args := map[string]any{"workarea": tm.crew.ID, "claim_key": "retried", "text": "once only", "idempotency_key": "run-1/step-9"}
	results := make([]remembered, 50)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			body, _ := json.Marshal(args)
			r := s.do(t, "POST", "/v1/memories", tm.writer.Token, string(body))
			if r.Status != 201 {
				t.Errorf("remember %d: %d %s", i, r.Status, r.Body)
				return
			}
			_ = json.Unmarshal(r.Body, &results[i])
		})
	}
	wg.Wait()
	replays := 0
	for _, r := range results {
		if r.ArtifactID != results[0].ArtifactID {
			t.Fatalf("two claims: %s and %s", results[0].ArtifactID, r.ArtifactID)
		}
		if r.IdempotentReplay {
			replays++
		}
	}
	if replays != 49 {
		t.Fatalf("replays = %d, want 49", replays)
	}
	args["text"] = "something else"
	code, _ := toolError(t, s.mcpSession(t, tm.writer.Token, "2025-11-25"), "oml_remember", args)
	if code != "idempotency.conflict" {
		t.Fatalf("same key, other text: %s", code)
	}
	if n := s.count(t, `SELECT count(*) FROM admission.artifacts`); n != 1 {
		t.Fatalf("%d artifacts", n)
	}
	_ = fmt.Sprint()
}

// Reviewers racing for the queue never lease one item twice: every item
// is served once and promoted once.
func TestConcurrentServesLeaseOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	const items = 24
	for i := range items {
		body := fmt.Sprintf(`{"workarea":%q,"claim_key":"item-%d","text":"item %d"}`, tm.crew.ID, i, i)
		if r := s.do(t, "POST", "/v1/memories", tm.writer.Token, body); r.Status != 201 {
			t.Fatalf("remember: %d %s", r.Status, r.Body)
		}
	}
	reviewers := []issuedKey{tm.reviewer, tm.author2}
	for i := range 4 {
		k := s.issueKey(t, fmt.Sprintf("reviewer-x%d", i), "dreamer")
		s.grant(t, k.KeyID, "universe.procurement", "dreamer.review", "allow")
		reviewers = append(reviewers, k)
	}
	var mu sync.Mutex
	servedItems := map[string]int{}
	var wg sync.WaitGroup
	for _, k := range reviewers {
		wg.Go(func() {
			for {
				r := s.do(t, "POST", "/v1/reviews/serve", k.Token, nil)
				if r.Status == 204 {
					return
				}
				var srv served
				if r.Status != 200 || json.Unmarshal(r.Body, &srv) != nil {
					t.Errorf("serve: %d %s", r.Status, r.Body)
					return
				}
				mu.Lock()
				servedItems[srv.Item.ArtifactID]++
				mu.Unlock()
				if v := s.verdict(t, k.Token, srv.ServeID, "approve"); v.Status != 200 {
					t.Errorf("verdict on %s: %d %s", srv.Item.ArtifactID, v.Status, v.Body)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(servedItems) != items {
		t.Fatalf("%d of %d items served", len(servedItems), items)
	}
	for id, n := range servedItems {
		if n != 1 {
			t.Fatalf("%s served %d times", id, n)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM admission.artifacts WHERE state = 'promoted'`); n != items {
		t.Fatalf("%d promoted", n)
	}
}
