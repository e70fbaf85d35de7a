package e2e

import (
	"strings"
	"testing"
)

type briefOut struct {
	Since struct {
		Cursor int64  `json:"cursor"`
		Basis  string `json:"basis"`
	} `json:"since"`
	Answers struct {
		Items []struct {
			ID      string `json:"id"`
			Outcome string `json:"outcome"`
			Text    string `json:"text"`
		} `json:"items"`
		More int `json:"more"`
	} `json:"answers"`
	PreviousSession *struct {
		SessionID   string `json:"session_id"`
		HandoffNote string `json:"handoff_note"`
	} `json:"previous_session"`
	Events struct {
		Items []struct {
			ID        string `json:"id"`
			EventType string `json:"event_type"`
			Text      string `json:"text"`
			Truncated bool   `json:"truncated"`
			Open      bool   `json:"open"`
		} `json:"items"`
		More int `json:"more"`
	} `json:"events"`
}

// session_brief: the previous session's handoff in full, the answers to
// the caller's questions in the window and the rest of the window, cut to
// pointers; it moves no feed cursor.
func TestSessionBrief(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	agent := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	other := s.mcpSession(t, tm.author2.Token, "2025-11-25")
	brief := func() briefOut {
		t.Helper()
		return toolJSON[briefOut](t, agent, "session_brief", map[string]any{"workarea": tm.crew.ID})
	}
	if b := brief(); b.Since.Basis != "none" || b.PreviousSession != nil {
		t.Fatalf("a first brief: %+v", b)
	}

	run1 := toolJSON[struct {
		SessionID string `json:"session_id"`
	}](t, agent, "session_start", map[string]any{"workarea": tm.crew.ID, "name": "run-1"})
	q := toolJSON[struct {
		QuestionID string `json:"question_id"`
	}](t, agent, "question_post", map[string]any{"workarea": tm.crew.ID, "body": "Which supplier for Q1?"})
	open := toolJSON[struct {
		QuestionID string `json:"question_id"`
	}](t, agent, "question_post", map[string]any{"workarea": tm.crew.ID, "body": "Ship by sea?"})
	note := "Left at step 3: " + strings.Repeat("the quotes are in /fs/quotes; ", 20)
	toolJSON[map[string]any](t, agent, "session_end", map[string]any{"session_id": run1.SessionID, "handoff_note": note})
	if r := s.do(t, "POST", "/v1/inbox/"+q.QuestionID+"/answer", s.AdminKey, map[string]any{"body": "Accra"}); r.Status != 200 {
		t.Fatalf("answer: %d %s", r.Status, r.Body)
	}
	long := strings.Repeat("x", 300)
	toolJSON[map[string]any](t, other, "signal_append", map[string]any{"workarea": tm.crew.ID, "kind": "signal", "body": long})

	b := brief()
	if b.Since.Basis != "previous_session" || b.PreviousSession == nil || b.PreviousSession.SessionID != run1.SessionID || b.PreviousSession.HandoffNote != note {
		t.Fatalf("the previous session's handoff in full: %+v", b)
	}
	if len(b.Answers.Items) != 1 || b.Answers.Items[0].ID != q.QuestionID || b.Answers.Items[0].Text != "Accra" {
		t.Fatalf("answers: %+v", b.Answers)
	}
	if len(b.Events.Items) == 0 || !b.Events.Items[0].Open || b.Events.Items[0].ID != open.QuestionID {
		t.Fatalf("the open question does not come first: %+v", b.Events.Items)
	}
	var cut bool
	for _, e := range b.Events.Items {
		if e.EventType == "feed.answer" {
			t.Fatalf("the answer listed in answers is in events too: %+v", e)
		}
		cut = cut || (e.Truncated && len(e.Text) == 200 && strings.HasPrefix(long, e.Text))
	}
	if !cut {
		t.Fatalf("the 300-character signal is not cut to a 200-character pointer: %+v", b.Events.Items)
	}

	// The brief moved no cursor: the feed still reads the signal; after the
	// read the brief's window starts at the feed cursor.
	feed := toolJSON[struct {
		Events []struct {
			Kind string `json:"kind"`
		} `json:"events"`
	}](t, agent, "feed_read", map[string]any{"workarea": tm.crew.ID})
	if len(feed.Events) == 0 {
		t.Fatal("feed_read after a brief read nothing: the brief moved the cursor")
	}
	if b := brief(); b.Since.Basis != "feed_cursor" || len(b.Answers.Items) != 0 {
		t.Fatalf("after feed_read: %+v", b)
	}
}
