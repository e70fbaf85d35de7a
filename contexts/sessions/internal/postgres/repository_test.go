package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/sessions/internal/app"
	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/contexts/sessions/internal/postgres"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/pgtest"
	"github.com/omlhub/oml/platform/scope"
)

func TestRepository(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	repo := postgres.New(db)
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	alice := domain.Owner{PrincipalID: "pr_a", Principal: "alice", KeyID: "key_a"}
	// Ids order the listing; fixed ones keep the order certain within a
	// millisecond.
	mk := func(id, wa, path, name string) domain.Session {
		s, err := domain.New("tn_1", id, wa, path, name, alice, at)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := repo.Insert(ctx, s); err != nil || !ok {
			t.Fatalf("insert %s: %v %v", name, ok, err)
		}
		return s
	}
	a := mk(ids.WithSuffix(ids.Session, "01J0000000000000000000000A"), "wa_crew", "wa_root.wa_crew", "nightly")
	b := mk(ids.WithSuffix(ids.Session, "01J0000000000000000000000B"), "wa_secret", "wa_root.wa_crew.wa_secret", "hidden")
	dup, _ := domain.New("tn_1", ids.New(ids.Session), "wa_crew", "wa_root.wa_crew", "nightly", alice, at)
	if ok, err := repo.Insert(ctx, dup); err != nil || ok {
		t.Fatalf("a second (workarea, owner, name) inserted: %v %v", ok, err)
	}
	if _, err := repo.GetForUpdate(ctx, "tn_2", a.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("another tenant reads it: %v", err)
	}

	err := db.InTx(ctx, func(ctx context.Context) error {
		s, err := repo.ByOwnerNameForUpdate(ctx, "tn_1", "wa_crew", "pr_a", "nightly")
		if err != nil || s.ID != a.ID {
			t.Fatalf("by name: %v %+v", err, s)
		}
		if err := s.End("key_a", "step 3", at.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		s.ForkedFrom = b.ID
		return repo.Update(ctx, s)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := repo.GetForUpdate(ctx, "tn_1", a.ID)
	if err != nil || got.Status != domain.Ended || got.HandoffNote != "step 3" || got.EndedAt == nil || got.EndedByKeyID != "key_a" || got.ForkedFrom != b.ID {
		t.Fatalf("after update: %v %+v", err, got)
	}

	list := func(q app.ListQuery) []string {
		t.Helper()
		q.TenantID, q.Limit = "tn_1", 10
		rows, err := repo.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range rows {
			out = append(out, s.Name)
		}
		return out
	}
	crew := scope.Subtrees{Allow: []string{"wa_root.wa_crew"}}
	if got := list(app.ListQuery{Readable: crew}); len(got) != 2 || got[0] != "hidden" {
		t.Fatalf("newest first: %v", got)
	}
	denied := scope.Subtrees{Allow: crew.Allow, Deny: []string{"wa_root.wa_crew.wa_secret"}}
	if got := list(app.ListQuery{Readable: denied}); len(got) != 1 || got[0] != "nightly" {
		t.Fatalf("deny wins: %v", got)
	}
	if got := list(app.ListQuery{Readable: crew, Under: "wa_root.wa_crew.wa_secret"}); len(got) != 1 || got[0] != "hidden" {
		t.Fatalf("under: %v", got)
	}
	if got := list(app.ListQuery{Readable: crew, Status: domain.Running}); len(got) != 1 || got[0] != "hidden" {
		t.Fatalf("status: %v", got)
	}
	if got := list(app.ListQuery{Readable: crew, After: b.ID}); len(got) != 1 || got[0] != "nightly" {
		t.Fatalf("after: %v", got)
	}

	for _, p := range [][2]string{{"wa_crew", a.ID}, {"wa_secret", b.ID}} {
		if err := repo.SetActive(ctx, "tn_1", "key_a", p[0], p[1], at); err != nil {
			t.Fatal(err)
		}
	}
	if err := repo.SetActive(ctx, "tn_1", "key_a", "wa_crew", b.ID, at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	act, err := repo.ActiveOf(ctx, "tn_1", "key_a")
	if err != nil || len(act) != 2 || act[0].WorkareaID != "wa_crew" || act[0].SessionID != b.ID {
		t.Fatalf("active: %v %+v", err, act)
	}
	if err := repo.ClearActive(ctx, "tn_1", b.ID); err != nil {
		t.Fatal(err)
	}
	if act, _ := repo.ActiveOf(ctx, "tn_1", "key_a"); len(act) != 0 {
		t.Fatalf("cleared: %+v", act)
	}
}
