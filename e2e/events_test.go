package e2e

import (
	"fmt"
	"slices"
	"testing"
)

type tailOut struct {
	Events []struct {
		Seq       int64          `json:"seq"`
		EventType string         `json:"event_type"`
		Subject   map[string]any `json:"subject"`
		Workarea  string         `json:"workarea"`
	} `json:"events"`
	HeadSeq      int64 `json:"head_seq"`
	Idle         bool  `json:"idle"`
	NextAfterSeq int64 `json:"next_after_seq"`
}

func (o tailOut) types() []string {
	var out []string
	for _, e := range o.Events {
		out = append(out, e.EventType)
	}
	return out
}

// oml_events_tail and GET /v1/events: a filtered view of the journal. A
// reader sees promotions in what it reads, never another writer's held
// submission (R3) nor a denied subtree's events; a writer sees its own;
// two readers see the same events in the same order; bad cursors are
// refused, never a silent restart.
func TestEventsTail(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	reader2 := s.issueKey(t, "reader-2", "reader")
	s.grant(t, reader2.KeyID, "universe.procurement", "reader", "allow")
	secret := s.createWorkarea(t, tm.crew.ID, "secret", "--status", "committed")
	s.grant(t, tm.reader.KeyID, secret.ID, "reader", "deny")
	tail := func(key issuedKey, after int64) tailOut {
		t.Helper()
		return decode[tailOut](t, s.do(t, "GET", fmt.Sprintf("/v1/events?scope=%s&after_seq=%d", tm.crew.ID, after), key.Token, nil), 200)
	}

	start := decode[tailOut](t, s.do(t, "GET", "/v1/events?scope="+tm.crew.ID, tm.reader.Token, nil), 200)
	if len(start.Events) != 0 || !start.Idle || start.HeadSeq == 0 || start.NextAfterSeq != start.HeadSeq {
		t.Fatalf("without after_seq the tail starts at the head: %+v", start)
	}
	h := start.HeadSeq

	held := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token,
		map[string]any{"workarea": tm.crew.ID, "claim_key": "held", "text": "Held for review."}), 201)
	if got := tail(tm.reader, h); len(got.Events) != 0 || got.HeadSeq <= h {
		t.Fatalf("a reader saw another writer's held submission: %+v", got)
	}
	if got := tail(tm.writer, h); !slices.Contains(got.types(), "submission.remember") {
		t.Fatalf("the writer does not see its own submission: %v", got.types())
	}
	srv, ok := s.serve(t, tm.reviewer.Token)
	if !ok || srv.Item.ArtifactID != held.ArtifactID {
		t.Fatalf("serve: %v %+v", ok, srv)
	}
	decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, srv.ServeID, "approve"), 200)
	hidden := tm.promote(t, tm.writer, tm.reviewer, secret.ID, "hidden", "In the denied subtree.")

	one, two := tail(tm.reader, h), tail(reader2, h)
	if !slices.Equal(one.types(), []string{"lifecycle.promote"}) || one.Events[0].Subject["artifact_id"] != held.ArtifactID {
		t.Fatalf("the reader's tail: %+v", one)
	}
	if !slices.Equal(two.types(), []string{"lifecycle.promote", "lifecycle.promote"}) || two.Events[1].Subject["artifact_id"] != hidden {
		t.Fatalf("a reader of the whole subtree: %+v", two)
	}
	if one.Events[0].Seq != two.Events[0].Seq || !one.Idle {
		t.Fatalf("two readers disagree on one event: %+v / %+v", one, two)
	}
	// Over MCP, the same answer.
	cs := s.mcpSession(t, tm.reader.Token, "2025-11-25")
	viaMCP := toolJSON[tailOut](t, cs, "oml_events_tail", map[string]any{"scope": tm.crew.ID, "after_seq": h})
	if !slices.Equal(viaMCP.types(), one.types()) || viaMCP.Events[0].Seq != one.Events[0].Seq {
		t.Fatalf("oml_events_tail: %+v", viaMCP)
	}
	// Paging: limit 1 from before both promotions, then on from the cursor.
	first := decode[tailOut](t, s.do(t, "GET", fmt.Sprintf("/v1/events?scope=%s&after_seq=%d&limit=1", tm.crew.ID, h), reader2.Token, nil), 200)
	if len(first.Events) != 1 || first.Idle {
		t.Fatalf("limit 1: %+v", first)
	}
	if rest := tail(reader2, first.NextAfterSeq); len(rest.Events) != 1 || rest.Events[0].Seq == first.Events[0].Seq {
		t.Fatalf("continuing from next_after_seq: %+v", rest)
	}

	for name, path := range map[string]string{
		"negative after_seq":  "/v1/events?scope=" + tm.crew.ID + "&after_seq=-1",
		"malformed after_seq": "/v1/events?scope=" + tm.crew.ID + "&after_seq=abc",
		"after_seq past head": fmt.Sprintf("/v1/events?scope=%s&after_seq=%d", tm.crew.ID, one.HeadSeq+1000),
		"no scope":            "/v1/events?after_seq=0",
		"limit past ceiling":  "/v1/events?scope=" + tm.crew.ID + "&after_seq=0&limit=501",
		"unreadable workarea": "/v1/events?scope=" + secret.ID + "&after_seq=0",
	} {
		r := s.do(t, "GET", path, tm.reader.Token, nil)
		want := map[string]string{"limit past ceiling": "limit.ceiling", "unreadable workarea": "access.not_found"}[name]
		if want == "" {
			want = "request.validation"
		}
		if r.code() != want {
			t.Errorf("%s: %d %s, want %s", name, r.Status, r.Body, want)
		}
	}
	if code, _ := toolError(t, cs, "oml_events_tail", map[string]any{"scope": tm.crew.ID, "after_seq": "x"}); code != "request.validation" {
		t.Errorf("after_seq of the wrong type: %s", code)
	}
	if code, _ := toolError(t, s.mcpSession(t, s.issueKey(t, "op", "operator").Token, "2025-11-25"), "oml_events_tail", map[string]any{"scope": "universe"}); code != "access.verb_ceiling" {
		t.Errorf("operator: %s", code)
	}
}
