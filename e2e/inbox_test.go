package e2e

import (
	"strings"
	"testing"

	"github.com/omlhub/oml/platform/ids"
)

type inboxItem struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"`
	Status   string   `json:"status"`
	Options  []string `json:"options"`
	Expired  bool     `json:"expired"`
	OnExpiry string   `json:"on_expiry"`
	Answer   *struct {
		Body string `json:"body"`
		By   string `json:"by"`
	} `json:"answer"`
	Decision *struct {
		Decision string `json:"decision"`
		Note     string `json:"note"`
		By       string `json:"by"`
	} `json:"decision"`
}

type inboxOut struct {
	Items     []inboxItem `json:"items"`
	NextSince int64       `json:"next_since"`
}

type feedOut struct {
	Events []struct {
		Seq     int64          `json:"seq"`
		Kind    string         `json:"kind"`
		Payload map[string]any `json:"payload"`
	} `json:"events"`
	NextSince *int64 `json:"next_since"`
}

// Questions, answers, approvals and the feed, end to end: every refusal
// writes nothing; an admin answers and decides over HTTP and inbox_read
// shows it; an answered question refuses another answer; the open-items
// cap and the event ceiling hold; feed_read resumes from its stored
// cursor after a restart.
func TestInboxQuestionsApprovalsAndFeed(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_EVENTS_PER_WORKAREA=5", "OML_INBOX_OPEN_MAX=2")
	tm := newTeam(t, s)
	ws := tm.crew.ID
	agent := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	other := s.mcpSession(t, tm.author2.Token, "2025-11-25")

	long := strings.Repeat("x", 81)
	refusals := []struct {
		name, tool string
		args       map[string]any
	}{
		{"seven options", "question_post", map[string]any{"workarea": ws, "body": "q", "options": []string{"a", "b", "c", "d", "e", "f", "g"}}},
		{"an 81-character option", "question_post", map[string]any{"workarea": ws, "body": "q", "options": []string{"a", long}}},
		{"duplicate options", "question_post", map[string]any{"workarea": ws, "body": "q", "options": []string{"same", " same "}}},
		{"a 59-second deadline", "question_post", map[string]any{"workarea": ws, "body": "q", "expires_in_seconds": 59}},
		{"on_expiry on a question", "question_post", map[string]any{"workarea": ws, "body": "q", "expires_in_seconds": 60, "on_expiry": "approve"}},
		{"a deadline on a signal", "signal_append", map[string]any{"workarea": ws, "kind": "signal", "body": "s", "expires_in_seconds": 60}},
	}
	for _, r := range refusals {
		if code, body := toolError(t, agent, r.tool, r.args); code != "request.validation" {
			t.Fatalf("%s: %s %s", r.name, code, body)
		}
	}
	if got := toolJSON[inboxOut](t, agent, "inbox_read", map[string]any{"workarea": ws}); len(got.Items) != 0 {
		t.Fatalf("a refusal wrote an item: %+v", got)
	}
	if got := toolJSON[feedOut](t, agent, "feed_read", map[string]any{"workarea": ws, "since": 0, "kind": "signal"}); len(got.Events) != 0 {
		t.Fatalf("a refusal wrote a feed event: %+v", got)
	}

	// Ask (event 1 of 5), answer as the admin over HTTP, read it back.
	q := toolJSON[struct {
		QuestionID string `json:"question_id"`
		EventID    string `json:"event_id"`
	}](t, agent, "question_post", map[string]any{"workarea": ws, "body": "Which alloy?", "options": []string{" steel ", "brass"}, "expires_in_seconds": 300, "idempotency_key": "q1"})
	if q.QuestionID == "" || q.QuestionID != q.EventID {
		t.Fatalf("question_post: %+v", q)
	}
	again := toolJSON[struct {
		QuestionID string `json:"question_id"`
		Replay     bool   `json:"idempotent_replay"`
	}](t, agent, "question_post", map[string]any{"workarea": ws, "body": "Which alloy?", "options": []string{" steel ", "brass"}, "expires_in_seconds": 300, "idempotency_key": "q1"})
	if again.QuestionID != q.QuestionID || !again.Replay {
		t.Fatalf("an idempotent retry: %+v", again)
	}
	if code, _ := toolError(t, agent, "answer_post", map[string]any{"question_id": q.QuestionID, "body": "mine"}); code != "access.denied" {
		t.Fatalf("the asker answered itself: %s", code)
	}
	if r := s.do(t, "POST", "/v1/inbox/"+q.QuestionID+"/answer", tm.writer.Token, map[string]any{"body": "steel"}); r.Status != 403 {
		t.Fatalf("a non-admin answered over HTTP: %d %s", r.Status, r.Body)
	}
	ans := decode[inboxItem](t, s.do(t, "POST", "/v1/inbox/"+q.QuestionID+"/answer", s.AdminKey, map[string]any{"body": "steel"}), 200)
	if ans.Status != "answered" || ans.Answer == nil || ans.Answer.Body != "steel" {
		t.Fatalf("the admin's answer: %+v", ans)
	}
	read := toolJSON[inboxOut](t, agent, "inbox_read", map[string]any{"workarea": ws})
	if len(read.Items) != 1 || read.Items[0].Answer == nil || read.Items[0].Answer.Body != "steel" || strings.Join(read.Items[0].Options, "|") != "steel|brass" {
		t.Fatalf("inbox_read after the answer: %+v", read)
	}
	if code, _ := toolError(t, other, "answer_post", map[string]any{"question_id": q.QuestionID, "body": "brass"}); code != "inbox.conflict" {
		t.Fatalf("an answer to an answered question: %s", code)
	}

	// Two approvals (events 2, 3) fill the open-items cap of 2.
	var approvals []string
	for i := range 2 {
		a := toolJSON[struct {
			ApprovalID string `json:"approval_id"`
			OnExpiry   string `json:"on_expiry"`
		}](t, agent, "signal_append", map[string]any{"workarea": ws, "kind": "approval", "body": "Ship it?", "expires_in_seconds": 600 + i})
		if a.ApprovalID == "" || a.OnExpiry != "decline" {
			t.Fatalf("approval: %+v", a)
		}
		approvals = append(approvals, a.ApprovalID)
	}
	if code, body := toolError(t, agent, "question_post", map[string]any{"workarea": ws, "body": "one more?"}); code != "limit.rate" {
		t.Fatalf("past the open-items cap: %s %s", code, body)
	}
	if r := s.do(t, "POST", "/v1/inbox/"+approvals[0]+"/decide", s.AdminKey, map[string]any{"decision": "approved", "note": "go"}); r.Status != 200 {
		t.Fatalf("decide: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "POST", "/v1/inbox/"+approvals[0]+"/decide", s.AdminKey, map[string]any{"decision": "declined"}); r.code() != "inbox.conflict" {
		t.Fatalf("a second decision: %d %s", r.Status, r.Body)
	}
	open := decode[inboxOut](t, s.do(t, "GET", "/v1/inbox?status=open&workarea="+ws, s.AdminKey, nil), 200)
	if len(open.Items) != 1 || open.Items[0].ID != approvals[1] {
		t.Fatalf("GET /v1/inbox?status=open: %+v", open)
	}

	// Signals (events 4, 5), then the ceiling.
	for range 2 {
		toolJSON[map[string]any](t, agent, "signal_append", map[string]any{"workarea": ws, "kind": "finished", "body": "done"})
	}
	if code, body := toolError(t, agent, "signal_append", map[string]any{"workarea": ws, "kind": "signal", "body": "past"}); code != "limit.ceiling" || !strings.Contains(string(body), "OML_EVENTS_PER_WORKAREA") {
		t.Fatalf("past the ceiling: %s %s", code, body)
	}

	// The reader's feed: everything so far, then nothing, across a restart.
	readerCS := s.mcpSession(t, tm.reader.Token, "2025-11-25")
	first := toolJSON[feedOut](t, readerCS, "feed_read", map[string]any{"workarea": ws})
	kinds := map[string]int{}
	for _, e := range first.Events {
		kinds[e.Kind]++
	}
	if kinds["question"] != 1 || kinds["approval"] != 2 || kinds["answer"] != 2 || kinds["finished"] != 2 || first.NextSince == nil {
		t.Fatalf("the first feed read: %v %+v", kinds, first)
	}
	s.restart(t)
	readerCS = s.mcpSession(t, tm.reader.Token, "2025-11-25")
	resumed := toolJSON[feedOut](t, readerCS, "feed_read", map[string]any{"workarea": ws})
	if len(resumed.Events) != 0 || resumed.NextSince == nil || *resumed.NextSince != *first.NextSince {
		t.Fatalf("after a restart the feed resumes from its stored cursor: %+v (was %d)", resumed, *first.NextSince)
	}
}

// The human works the inbox from the CLI: list, answer, decide.
func TestInboxCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	cs := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	q := toolJSON[struct {
		QuestionID string `json:"question_id"`
	}](t, cs, "question_post", map[string]any{"workarea": tm.crew.ID, "body": "Which supplier for Q1?", "options": []string{"Accra", "Tema"}})
	a := toolJSON[struct {
		EventID string `json:"event_id"`
	}](t, cs, "signal_append", map[string]any{"workarea": tm.crew.ID, "kind": "approval", "body": "Order 40 t from Accra?"})

	out := s.mustOML(t, s.AdminKey, "inbox", "--status", "open")
	if !strings.Contains(out, q.QuestionID) || !strings.Contains(out, a.EventID) || !strings.Contains(out, "[Accra | Tema]") {
		t.Fatalf("oml inbox:\n%s", out)
	}
	if out := s.mustOML(t, s.AdminKey, "inbox", "answer", q.QuestionID, "Accra, for the price"); !strings.Contains(out, "answered by") {
		t.Fatalf("oml inbox answer:\n%s", out)
	}
	if out := s.mustOML(t, s.AdminKey, "inbox", "decide", a.EventID, "approve", "--note", "within budget"); !strings.Contains(out, "approved by") {
		t.Fatalf("oml inbox decide:\n%s", out)
	}
	if _, errOut, err := s.oml(t, s.AdminKey, "inbox", "decide", a.EventID, "decline"); err == nil || !strings.Contains(errOut, "inbox.conflict") {
		t.Fatalf("a second decision: %v %s", err, errOut)
	}
	if _, errOut, err := s.oml(t, tm.writer.Token, "inbox", "answer", q.QuestionID, "me"); err == nil {
		t.Fatalf("a writer answered over the human's route: %s", errOut)
	}
	if out := s.mustOML(t, tm.writer.Token, "inbox", "--workarea", tm.crew.ID, "--status", "resolved"); !strings.Contains(out, "2 items") {
		t.Fatalf("the asker's resolved items:\n%s", out)
	}
}

// Another tenant's inbox items answer as missing ones, to every verb.
func TestInboxForeignTenant(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	q := toolJSON[struct {
		QuestionID string `json:"question_id"`
	}](t, s.mcpSession(t, tm.writer.Token, "2025-11-25"), "question_post", map[string]any{"workarea": tm.crew.ID, "body": "Ours?"})
	foreign := s.bootstrapTenant(t, "globex")
	missing := s.do(t, "POST", "/v1/inbox/"+ids.New(ids.Event)+"/answer", foreign, map[string]any{"body": "x"})
	for name, r := range map[string]reply{
		"answer": s.do(t, "POST", "/v1/inbox/"+q.QuestionID+"/answer", foreign, map[string]any{"body": "theirs"}),
		"decide": s.do(t, "POST", "/v1/inbox/"+q.QuestionID+"/decide", foreign, map[string]any{"decision": "approved"}),
	} {
		if r.Status != 404 || r.code() != "access.not_found" {
			t.Errorf("%s another tenant's item: %d %s", name, r.Status, r.Body)
		}
	}
	if missing.Status != 404 || missing.code() != "access.not_found" {
		t.Errorf("an unknown item: %d %s", missing.Status, missing.Body)
	}
	list := decode[inboxPage](t, s.do(t, "GET", "/v1/inbox", foreign, nil), 200)
	if len(list.Items) != 0 {
		t.Fatalf("another tenant's inbox lists ours: %+v", list)
	}
	if n := s.count(t, `SELECT count(*) FROM inbox.items WHERE id = $1 AND status = 'open'`, q.QuestionID); n != 1 {
		t.Fatal("a foreign call changed the item")
	}
}

// What a review of issue 12 found: a feed shows other contexts' events by
// subject only, a feed cursor beyond the head is refused, the asker cannot
// resolve its own item through the human's routes, and "hub" is no
// principal a key may take.
func TestCoordinationGuards(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	tm.promote(t, tm.writer, tm.reviewer, tm.crew.ID, "fact", "A promoted fact.")
	feed := toolJSON[struct {
		Events []struct {
			EventType string         `json:"event_type"`
			Payload   map[string]any `json:"payload"`
		} `json:"events"`
	}](t, s.mcpSession(t, tm.reader.Token, "2025-11-25"), "feed_read", map[string]any{"workarea": tm.crew.ID, "limit": 500})
	var promoted bool
	for _, e := range feed.Events {
		if e.EventType == "lifecycle.promote" {
			promoted = true
			if len(e.Payload) != 0 {
				t.Fatalf("a promotion's payload (its closure, the reviewer's reason) reached a reader: %+v", e.Payload)
			}
		}
	}
	if !promoted {
		t.Fatalf("the reader's feed lacks the promotion: %+v", feed.Events)
	}
	if code, _ := toolError(t, s.mcpSession(t, tm.reader.Token, "2025-11-25"), "feed_read", map[string]any{"workarea": tm.crew.ID, "since": 1 << 40}); code != "request.validation" {
		t.Fatalf("since beyond the head: %s", code)
	}

	who := decode[struct {
		KeyID string `json:"key_id"`
	}](t, s.do(t, "GET", "/v1/whoami", s.AdminKey, nil), 200)
	s.grant(t, who.KeyID, "universe.procurement", "writer", "allow")
	admin := s.mcpSession(t, s.AdminKey, "2025-11-25")
	mine := toolJSON[struct {
		EventID string `json:"event_id"`
	}](t, admin, "signal_append", map[string]any{"workarea": tm.crew.ID, "kind": "approval", "body": "May I?"})
	if r := s.do(t, "POST", "/v1/inbox/"+mine.EventID+"/decide", s.AdminKey, map[string]any{"decision": "approved"}); r.Status != 403 || r.code() != "access.denied" {
		t.Fatalf("the asker approved its own request: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "POST", "/v1/keys", s.AdminKey, map[string]any{"principal": "hub", "role": "writer"}); r.Status != 400 {
		t.Fatalf("a key for principal hub: %d %s", r.Status, r.Body)
	}
}
