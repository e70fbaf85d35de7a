package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/memstore"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
)

// A limit of L a minute on N replicas is a bucket of L/N on each, refilled
// at L/N a minute; a refusal says when a token will be there.
func TestLimiter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	j := &fakeJournal{events: map[string][]journal.Event{}}
	svc := app.New(memstore.New(), j, inline{}, func() time.Time { return now })
	boot := must(svc.Bootstrap(context.Background(), "acme"))(t)
	admin := as(t, svc, boot.AdminKey)
	w := must(svc.IssueKey(admin, "writer-1", "writer"))(t)
	l := svc.NewLimiter(3, time.Minute)
	writer, _ := auth.From(as(t, svc, w.Token))
	ctx := context.Background()

	// No quota: no limit.
	for range 1000 {
		if err := l.Write(ctx, writer); err != nil {
			t.Fatal(err)
		}
	}
	// 60 writes a minute on 3 replicas: 20 here at once, then one every 3 s.
	must(svc.SetQuota(admin, "", 60))(t)
	for i := range 20 {
		if err := l.Write(ctx, writer); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	err := l.Write(ctx, writer)
	wantCode(t, err, errs.LimitQuota)
	if e := errs.From(err); !e.Retryable || e.Public().RetryAfterSeconds != 3 {
		t.Fatalf("refusal %+v", e.Public())
	}
	now = now.Add(3 * time.Second)
	if err := l.Write(ctx, writer); err != nil {
		t.Fatalf("after 3 s: %v", err)
	}
	wantCode(t, l.Write(ctx, writer), errs.LimitQuota)

	// A key's requests: 6 a minute on 3 replicas, 2 here.
	must(svc.SetQuota(admin, w.Key.ID, 6))(t)
	for range 2 {
		if err := l.Request(ctx, writer); err != nil {
			t.Fatal(err)
		}
	}
	err = l.Request(ctx, writer)
	wantCode(t, err, errs.LimitRate)
	if s := errs.From(err).Public().RetryAfterSeconds; s != 30 {
		t.Fatalf("retry after %d s, want 30", s)
	}
	// Admin keys are not counted against the tenant's writes.
	if err := l.Write(ctx, must2Caller(t, admin)); err != nil {
		t.Fatalf("an admin's write over the quota: %v", err)
	}
	// Other keys are not limited by it; clearing lifts it.
	other, _ := auth.From(admin)
	if err := l.Request(ctx, other); err != nil {
		t.Fatal(err)
	}
	must(svc.SetQuota(admin, w.Key.ID, 0))(t)
	if err := l.Request(ctx, writer); err != nil {
		t.Fatalf("cleared: %v", err)
	}
	q := must(svc.GetQuotas(admin))(t)
	if q.WritesPerMinute != 60 || len(q.Keys) != 0 {
		t.Fatalf("quotas %+v", q)
	}
	// Settings are checked and journalled.
	_, err = svc.SetQuota(admin, "", -1)
	wantCode(t, err, errs.Validation)
	_, err = svc.SetQuota(as(t, svc, w.Token), "", 10)
	wantCode(t, err, errs.VerbCeiling)
	if n := countOf(j.types(boot.TenantID), "quota.set"); n != 3 {
		t.Fatalf("quota.set events: %d", n)
	}
	var _ app.Quotas
}

func must2Caller(t *testing.T, ctx context.Context) auth.Caller {
	t.Helper()
	c, ok := auth.From(ctx)
	if !ok {
		t.Fatal("no caller")
	}
	return c
}

// BenchmarkLimiter is the in-process cost of one write's checks (its key's
// request and its tenant's write) with both limits set and far from
// reached.
func BenchmarkLimiter(b *testing.B) {
	j := &fakeJournal{events: map[string][]journal.Event{}}
	svc := app.New(memstore.New(), j, inline{}, time.Now)
	boot, err := svc.Bootstrap(context.Background(), "acme")
	if err != nil {
		b.Fatal(err)
	}
	c, err := svc.Authenticate(context.Background(), boot.AdminKey)
	if err != nil {
		b.Fatal(err)
	}
	admin := auth.With(context.Background(), c)
	w, err := svc.IssueKey(admin, "writer-1", "writer")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.SetQuota(admin, "", 1_000_000); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.SetQuota(admin, w.Key.ID, 1_000_000); err != nil {
		b.Fatal(err)
	}
	l := svc.NewLimiter(3, time.Hour)
	writer, err := svc.Authenticate(context.Background(), w.Token)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		_ = l.Request(ctx, writer)
		_ = l.Write(ctx, writer)
	}
}
