package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/memstore"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
)

// Web sessions act as one live key: until they expire, are signed out or
// their key is revoked. A sign-in code works once. Each start and end is
// journalled; no credential is.
func TestWebSessions(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	j := &fakeJournal{events: map[string][]journal.Event{}}
	svc := app.New(memstore.New(), j, inline{}, func() time.Time { return now })
	boot := must(svc.Bootstrap(context.Background(), "acme"))(t)
	admin := as(t, svc, boot.AdminKey)
	rev := must(svc.IssueKey(admin, "reviewer-1", "dreamer"))(t)
	ctx := context.Background()

	s := must(svc.SignInWeb(ctx, rev.Token, time.Hour))(t)
	if !strings.HasPrefix(s.Token, "oml_w_") || s.Token == rev.Token || !s.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("signed in: %+v", s)
	}
	c, _ := must2(svc.ResolveWeb(ctx, s.Token))(t)
	if c.KeyID != rev.Key.ID || c.Principal != "reviewer-1" {
		t.Fatalf("resolved %+v", c)
	}
	// A bad key, a key's token as a session, a session as a code: refused.
	_, err := svc.SignInWeb(ctx, "oml_k_nope", time.Hour)
	wantCode(t, err, errs.AuthInvalid)
	_, _, err = svc.ResolveWeb(ctx, rev.Token)
	wantCode(t, err, errs.AuthInvalid)
	_, err = svc.RedeemWebCode(ctx, s.Token, time.Hour)
	wantCode(t, err, errs.AuthInvalid)
	wrong := "0"
	if strings.HasSuffix(s.Token, "0") {
		wrong = "1"
	}
	_, _, err = svc.ResolveWeb(ctx, s.Token[:len(s.Token)-1]+wrong)
	wantCode(t, err, errs.AuthInvalid)

	// Expiry.
	now = now.Add(time.Hour)
	_, _, err = svc.ResolveWeb(ctx, s.Token)
	wantCode(t, err, errs.AuthInvalid)

	// Sign-out ends it at once; a second sign-out is refused as unknown.
	s2 := must(svc.SignInWeb(ctx, rev.Token, time.Hour))(t)
	if err := svc.SignOutWeb(ctx, s2.Token); err != nil {
		t.Fatal(err)
	}
	_, _, err = svc.ResolveWeb(ctx, s2.Token)
	wantCode(t, err, errs.AuthInvalid)
	wantCode(t, svc.SignOutWeb(ctx, s2.Token), errs.AuthInvalid)

	// A code: once, and only for its own key.
	code := must(svc.IssueWebCode(as(t, svc, rev.Token), 10*time.Minute))(t)
	if !strings.HasPrefix(code.Token, "oml_c_") {
		t.Fatalf("code %q", code.Token)
	}
	_, _, err = svc.ResolveWeb(ctx, code.Token)
	wantCode(t, err, errs.AuthInvalid)
	for range 2 { // peeking spends nothing
		if c := must(svc.PeekWebCode(ctx, code.Token))(t); c.KeyID != rev.Key.ID {
			t.Fatalf("peek: %+v", c)
		}
	}
	s3 := must(svc.RedeemWebCode(ctx, code.Token, time.Hour))(t)
	if s3.Caller.KeyID != rev.Key.ID {
		t.Fatalf("code signed in as %+v", s3.Caller)
	}
	_, err = svc.RedeemWebCode(ctx, code.Token, time.Hour)
	wantCode(t, err, errs.AuthInvalid)
	_, err = svc.PeekWebCode(ctx, code.Token)
	wantCode(t, err, errs.AuthInvalid)
	late := must(svc.IssueWebCode(as(t, svc, rev.Token), time.Minute))(t)
	now = now.Add(time.Minute)
	_, err = svc.RedeemWebCode(ctx, late.Token, time.Hour)
	wantCode(t, err, errs.AuthInvalid)

	// Revoking the key ends its sessions, and its codes.
	pending := must(svc.IssueWebCode(as(t, svc, rev.Token), time.Hour))(t)
	must(svc.RevokeKey(admin, rev.Key.ID))(t)
	_, _, err = svc.ResolveWeb(ctx, s3.Token)
	wantCode(t, err, errs.AuthInvalid)
	_, err = svc.RedeemWebCode(ctx, pending.Token, time.Hour)
	wantCode(t, err, errs.AuthInvalid)
	_, err = svc.SignInWeb(ctx, rev.Token, time.Hour)
	wantCode(t, err, errs.AuthInvalid)
	_, err = svc.SignInWeb(ctx, boot.AdminKey, 0)
	wantCode(t, err, errs.Validation)

	// A week after they ended or expired, the sweep deletes them.
	if n := must(svc.SweepWeb(ctx, 100))(t); n != 0 {
		t.Fatalf("swept %d fresh credentials", n)
	}
	now = now.Add(app.WebKeep + 2*time.Hour)
	if n := must(svc.SweepWeb(ctx, 100))(t); n != 6 {
		t.Fatalf("swept %d old credentials, want 6", n)
	}
	types := j.types(boot.TenantID)
	for typ, want := range map[string]int{"web.sign_in": 3, "web.sign_out": 1, "web.code_issue": 3} {
		if got := countOf(types, typ); got != want {
			t.Errorf("%s events: %d, want %d (%v)", typ, got, want, types)
		}
	}
	for _, e := range j.events[boot.TenantID] {
		for _, v := range []any{e.Subject, e.Payload} {
			if s := fmtAny(v); strings.Contains(s, "oml_w_") || strings.Contains(s, "oml_c_") {
				t.Fatalf("a credential in the journal: %v", e)
			}
		}
	}
}

func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func must2[A, B any](a A, b B, err error) func(*testing.T) (A, B) {
	return func(t *testing.T) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}

func fmtAny(v any) string { return fmt.Sprint(v) }
