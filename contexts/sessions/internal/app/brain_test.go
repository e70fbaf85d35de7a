package app

import (
	"context"
	"strings"
	"testing"

	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/platform/errs"
)

// A session brain is its owner's alone: conditional writes by version or
// absent, a conflict naming the current version, nothing stored past the
// bound, another agent's session answering as a missing one; an adoption
// hands the brain over, a fork copies it, a prune drops it.
func TestBrainOwnerOnly(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := mustStart(t, f, f.alice, Start{Workarea: "wa_crew", Name: "nightly"}).Session
	mine := BrainRef{Store: "session"}
	_, v1, created, err := f.svc.BrainPut(f.alice, mine, "/fs/notes.md", "step 1", "absent")
	if err != nil || !created || v1.Version != domain.VersionOf([]byte("step 1")) {
		t.Fatalf("first put: %+v %v %v", v1, created, err)
	}
	if _, _, _, err := f.svc.BrainPut(f.alice, mine, "/fs/notes.md", "again", "absent"); !errs.Is(err, errs.SessionConflict) ||
		!strings.HasSuffix(errs.From(err).Message, "current_version="+v1.Version) {
		t.Fatalf("absent over a stored entry: %v", err)
	}
	_, v2, _, err := f.svc.BrainPut(f.alice, mine, "/fs/notes.md", "step 2", v1.Version)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := f.svc.BrainPut(f.alice, mine, "/fs/notes.md", "stale", v1.Version); !errs.Is(err, errs.SessionConflict) {
		t.Fatalf("a stale if_version: %v", err)
	}
	if _, _, _, err := f.svc.BrainPut(f.alice, mine, "/kv/big", strings.Repeat("x", domain.MaxBrainValue+1), ""); !errs.Is(err, errs.LimitSize) {
		t.Fatalf("4 MiB + 1: %v", err)
	}
	if _, e, err := f.svc.BrainGet(f.alice, BrainRef{}, "/kv/big", ""); !errs.Is(err, errs.NotFound) {
		t.Fatalf("the refused value was stored: %+v %v", e, err)
	}
	for name, bad := range map[string]struct {
		ref  BrainRef
		path string
		code errs.Code
	}{
		"no namespace":        {mine, "/tmp/x", errs.Validation},
		"dot dot":             {mine, "/fs/a/../b", errs.Validation},
		"the knowledge base":  {BrainRef{Store: "project"}, "/fs/a", errs.Validation},
		"no store on a write": {BrainRef{}, "/fs/a", errs.Validation},
		"another's session":   {BrainRef{Store: "session", Session: s.ID}, "/fs/a", errs.NotFound},
	} {
		ctx := f.alice
		if name == "another's session" {
			ctx = f.bob
		}
		if _, _, _, err := f.svc.BrainPut(ctx, bad.ref, bad.path, "x", ""); !errs.Is(err, bad.code) {
			t.Errorf("%s: %v, want %s", name, err, bad.code)
		}
	}
	for name, ctx := range map[string]context.Context{"bob": f.bob, "admin": f.admin, "reader": f.reader, "foreign": f.foreign} {
		if _, _, err := f.svc.BrainGet(ctx, BrainRef{Session: s.ID}, "/fs/notes.md", ""); !errs.Is(err, errs.NotFound) {
			t.Errorf("%s reads alice's brain: %v", name, err)
		}
	}
	// A fork copies the running brain; the source is untouched.
	fork := mustStart(t, f, f.bob, Start{Workarea: "wa_crew", Name: "copy", From: s.ID}).Session
	if _, _, _, err := f.svc.BrainPut(f.bob, BrainRef{Store: "session", Session: fork.ID}, "/fs/notes.md", "bob's", ""); err != nil {
		t.Fatal(err)
	}
	if _, e, err := f.svc.BrainGet(f.alice, BrainRef{Session: s.ID}, "/fs/notes.md", ""); err != nil || string(e.Content) != "step 2" || e.Version != v2.Version {
		t.Fatalf("the source after the fork's write: %+v %v", e, err)
	}
	// An adoption hands the brain over.
	if _, err := f.svc.End(f.alice, End{SessionID: s.ID}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := f.svc.BrainPut(f.alice, BrainRef{Store: "session", Session: s.ID}, "/fs/x", "x", ""); !errs.Is(err, errs.SessionConflict) {
		t.Fatalf("a write into an ended session: %v", err)
	}
	mustStart(t, f, f.bob, Start{Workarea: "wa_crew", Name: "nightly-b", From: s.ID})
	if _, e, err := f.svc.BrainGet(f.bob, BrainRef{Session: s.ID}, "/fs/notes.md", ""); err != nil || string(e.Content) != "step 2" {
		t.Fatalf("the adopter's read: %+v %v", e, err)
	}
	if _, _, err := f.svc.BrainGet(f.alice, BrainRef{Session: s.ID}, "/fs/notes.md", ""); !errs.Is(err, errs.NotFound) {
		t.Fatalf("the previous owner still reads it: %v", err)
	}
	p, err := f.svc.BrainList(f.bob, BrainRef{Session: s.ID}, "/fs/", "", 0)
	if err != nil || len(p.Entries) != 1 || p.Entries[0].Path != "/fs/notes.md" {
		t.Fatalf("list: %+v %v", p, err)
	}
}
