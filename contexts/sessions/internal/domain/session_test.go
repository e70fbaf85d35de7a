package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

var (
	t0    = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	alice = Owner{PrincipalID: "pr_a", Principal: "alice", KeyID: "key_a"}
	bob   = Owner{PrincipalID: "pr_b", Principal: "bob", KeyID: "key_b"}
)

func running(t *testing.T) Session {
	t.Helper()
	s, err := New("tn", "ses_1", "wa_1", "wa_0.wa_1", "nightly", alice, t0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"nightly": true, "a": true, strings.Repeat("é", MaxName): true,
		"": false, " padded": false, "padded ": false, "two\nlines": false, strings.Repeat("x", MaxName+1): false, "\xff": false,
	} {
		if err := CheckName(name); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

func TestEndAndResume(t *testing.T) {
	t.Parallel()
	s := running(t)
	if err := s.MayEnd("pr_b", false); !errs.Is(err, errs.Denied) {
		t.Fatalf("a stranger may end: %v", err)
	}
	if s.MayEnd("pr_b", true) != nil || s.MayEnd("pr_a", false) != nil {
		t.Fatal("owner or admin refused")
	}
	if err := s.End("key_a", strings.Repeat("x", MaxHandoffNote+1), t0); !errs.Is(err, errs.Validation) {
		t.Fatalf("an oversized note: %v", err)
	}
	if err := s.End("key_a", "step 3", t0.Add(time.Minute)); err != nil || s.Status != Ended || s.HandoffNote != "step 3" || s.EndedAt == nil {
		t.Fatalf("end: %v %+v", err, s)
	}
	if err := s.End("key_a", "", t0); !errs.Is(err, errs.SessionConflict) {
		t.Fatalf("ending twice: %v", err)
	}
	if !s.Resume("key_a2", t0.Add(2*time.Minute)) || s.Status != Running || s.EndedAt != nil || s.HandoffNote != "step 3" || s.Owner.KeyID != "key_a2" {
		t.Fatalf("resume reopens and keeps the note: %+v", s)
	}
	if s.Resume("key_a2", t0) {
		t.Fatal("resuming a running session changed it")
	}
}

func TestPickup(t *testing.T) {
	t.Parallel()
	s := running(t)
	if s.Pickup() != Forked {
		t.Fatal("a running session is forked")
	}
	if err := s.Adopt(bob, "mine", t0); !errs.Is(err, errs.SessionConflict) {
		t.Fatalf("adopting a running session: %v", err)
	}
	f, err := s.Fork("ses_2", bob, "copy", t0)
	if err != nil || f.ForkedFrom != "ses_1" || f.Owner != bob || f.Status != Running || f.WorkareaID != s.WorkareaID || !Continues(f, "ses_1") {
		t.Fatalf("fork: %v %+v", err, f)
	}
	_ = s.End("key_a", "note", t0)
	if s.Pickup() != Adopted {
		t.Fatal("an ended session is adopted")
	}
	if _, err := s.Fork("ses_3", bob, "copy", t0); !errs.Is(err, errs.SessionConflict) {
		t.Fatalf("forking an ended session: %v", err)
	}
	if err := s.Adopt(bob, "mine", t0); err != nil || s.ID != "ses_1" || s.Owner != bob || s.AdoptedFrom != "alice" ||
		s.Status != Running || s.HandoffNote != "note" || s.Name != "mine" || !Continues(s, "ses_1") {
		t.Fatalf("adopt: %v %+v", err, s)
	}
}

func TestReassign(t *testing.T) {
	t.Parallel()
	s := running(t)
	if err := s.Reassign(alice, t0); !errs.Is(err, errs.SessionConflict) {
		t.Fatalf("reassigning to the owner: %v", err)
	}
	if err := s.Reassign(bob, t0); err != nil || s.Owner != bob {
		t.Fatalf("reassign: %v %+v", err, s)
	}
	_ = s.End("key_b", "", t0)
	if err := s.Reassign(alice, t0); !errs.Is(err, errs.SessionConflict) {
		t.Fatalf("reassigning an ended session: %v", err)
	}
	if _, err := ParseStatus("paused"); !errs.Is(err, errs.Validation) {
		t.Fatalf("ParseStatus: %v", err)
	}
}
