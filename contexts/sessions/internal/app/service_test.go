package app

import (
	"context"
	"slices"
	"testing"

	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
)

func mustStart(t *testing.T, f fixture, ctx context.Context, cmd Start) Started {
	t.Helper()
	r, err := f.svc.Start(ctx, cmd)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestStartResumeAndRefusals(t *testing.T) {
	t.Parallel()
	f := setup(t)
	first := mustStart(t, f, f.alice, Start{Workarea: "wa_crew", Name: "nightly"})
	again := mustStart(t, f, f.alice, Start{Workarea: "universe.crew", Name: "nightly"})
	if first.Mode != domain.Started || again.Mode != domain.Resumed || again.Session.ID != first.Session.ID {
		t.Fatalf("start then resume: %+v, %+v", first, again)
	}
	theirs := mustStart(t, f, f.bob, Start{Workarea: "wa_crew", Name: "nightly"})
	if theirs.Session.ID == first.Session.ID {
		t.Fatal("two owners share a name's session")
	}
	for name, tc := range map[string]struct {
		ctx  context.Context
		cmd  Start
		code errs.Code
	}{
		"reader":          {f.reader, Start{Workarea: "wa_crew", Name: "x"}, errs.Denied},
		"foreign":         {f.foreign, Start{Workarea: "wa_crew", Name: "x"}, errs.NotFound},
		"blank name":      {f.alice, Start{Workarea: "wa_crew", Name: ""}, errs.Validation},
		"bad from":        {f.alice, Start{Workarea: "wa_crew", Name: "x", From: "nope"}, errs.NotFound},
		"unknown from":    {f.alice, Start{Workarea: "wa_crew", Name: "x", From: "ses_01J00000000000000000000000"}, errs.NotFound},
		"own from":        {f.alice, Start{Workarea: "wa_crew", Name: "other", From: first.Session.ID}, errs.Validation},
		"name held":       {f.bob, Start{Workarea: "wa_crew", Name: "nightly", From: first.Session.ID}, errs.SessionConflict},
		"operator caller": {auth.With(context.Background(), auth.Caller{TenantID: "tn_1", KeyID: "k", Role: "operator"}), Start{Workarea: "wa_crew", Name: "x"}, errs.VerbCeiling},
	} {
		if _, err := f.svc.Start(tc.ctx, tc.cmd); !errs.Is(err, tc.code) {
			t.Errorf("%s: %v, want %s", name, err, tc.code)
		}
	}
	if got := f.journal.types(); !slices.Equal(got, []string{"session.start", "session.start"}) {
		t.Fatalf("journal: %v", got)
	}
}

func TestEndAdoptFork(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := mustStart(t, f, f.alice, Start{Workarea: "wa_crew", Name: "nightly"}).Session
	for name, tc := range map[string]struct {
		ctx  context.Context
		code errs.Code
	}{"bob": {f.bob, errs.Denied}, "reader": {f.reader, errs.Denied}, "foreign": {f.foreign, errs.NotFound}} {
		if _, err := f.svc.End(tc.ctx, End{SessionID: s.ID}); !errs.Is(err, tc.code) {
			t.Errorf("%s ends: %v, want %s", name, err, tc.code)
		}
	}
	before := len(f.journal.types())
	ended, err := f.svc.End(f.alice, End{HandoffNote: "step 3"})
	if err != nil || ended.ID != s.ID || ended.Status != domain.Ended || len(f.journal.types()) != before+1 {
		t.Fatalf("end the active session: %v %+v", err, ended)
	}
	if _, err := f.svc.End(f.alice, End{}); !errs.Is(err, errs.Validation) {
		t.Fatalf("no active session left: %v", err)
	}
	if _, err := f.svc.End(f.admin, End{SessionID: s.ID}); !errs.Is(err, errs.SessionConflict) {
		t.Fatalf("ending an ended session: %v", err)
	}
	adopted := mustStart(t, f, f.bob, Start{Workarea: "wa_crew", Name: "nightly-b", From: s.ID})
	if adopted.Mode != domain.Adopted || adopted.Session.ID != s.ID || adopted.HandoffNote != "step 3" || adopted.Session.AdoptedFrom != "alice" {
		t.Fatalf("adopt: %+v", adopted)
	}
	if r := mustStart(t, f, f.bob, Start{Workarea: "wa_crew", Name: "nightly-b", From: s.ID}); r.Mode != domain.Resumed {
		t.Fatalf("a retried adoption: %+v", r)
	}
	fork := mustStart(t, f, f.alice, Start{Workarea: "wa_crew", Name: "copy", From: s.ID})
	if fork.Mode != domain.Forked || fork.Session.ForkedFrom != s.ID || fork.Session.ID == s.ID {
		t.Fatalf("fork: %+v", fork)
	}
	if r := mustStart(t, f, f.alice, Start{Workarea: "wa_crew", Name: "copy", From: s.ID}); r.Mode != domain.Resumed || r.Session.ID != fork.Session.ID {
		t.Fatalf("a retried fork: %+v", r)
	}
	if _, err := f.svc.End(f.admin, End{SessionID: fork.Session.ID}); err != nil {
		t.Fatalf("an admin ends: %v", err)
	}
	want := []string{"session.start", "session.end", "session.adopt", "session.fork", "session.end"}
	if got := f.journal.types(); !slices.Equal(got, want) {
		t.Fatalf("journal: %v, want %v", got, want)
	}
}

func TestReassignAndList(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := mustStart(t, f, f.alice, Start{Workarea: "wa_crew", Name: "long"}).Session
	for name, tc := range map[string]struct {
		ctx  context.Context
		to   string
		code errs.Code
	}{
		"by a writer":    {f.bob, "key_bob", errs.Denied},
		"to a reader":    {f.admin, "key_reader", errs.Denied},
		"to a stranger":  {f.admin, "key_foreign", errs.NotFound},
		"to the owner":   {f.admin, "key_alice", errs.SessionConflict},
		"by a foreigner": {f.foreign, "key_bob", errs.NotFound},
		"to nobody":      {f.admin, "", errs.Validation},
	} {
		if _, err := f.svc.Reassign(tc.ctx, s.ID, tc.to); !errs.Is(err, tc.code) {
			t.Errorf("%s: %v, want %s", name, err, tc.code)
		}
	}
	moved, err := f.svc.Reassign(f.admin, s.ID, "key_bob")
	if err != nil || moved.Owner.Principal != "bob" {
		t.Fatalf("reassign: %v %+v", err, moved)
	}
	if _, err := f.svc.End(f.alice, End{}); !errs.Is(err, errs.Validation) {
		t.Fatalf("the old owner keeps an active pointer: %v", err)
	}
	if got, err := f.svc.End(f.bob, End{}); err != nil || got.ID != s.ID {
		t.Fatalf("the new owner's active session: %v %+v", err, got)
	}
	mustStart(t, f, f.alice, Start{Workarea: "wa_crew", Name: "two"})
	mustStart(t, f, f.alice, Start{Workarea: "wa_crew", Name: "three"})
	p, err := f.svc.List(f.reader, List{Limit: 2})
	if err != nil || len(p.Sessions) != 2 || p.NextCursor == "" {
		t.Fatalf("first page: %v %+v", err, p)
	}
	p2, err := f.svc.List(f.reader, List{Limit: 2, Cursor: p.NextCursor})
	if err != nil || len(p2.Sessions) != 1 || p2.NextCursor != "" {
		t.Fatalf("second page: %v %+v", err, p2)
	}
	if p, _ := f.svc.List(f.reader, List{Status: "ended"}); len(p.Sessions) != 1 {
		t.Fatalf("ended: %+v", p)
	}
	if p, _ := f.svc.List(f.foreign, List{}); len(p.Sessions) != 0 {
		t.Fatalf("a foreign tenant lists %+v", p)
	}
	for _, q := range []List{{Limit: 201}, {Status: "paused"}, {Cursor: "x"}} {
		if _, err := f.svc.List(f.reader, q); !errs.Is(err, errs.Validation) {
			t.Errorf("%+v: %v", q, err)
		}
	}
}
