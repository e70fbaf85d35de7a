package app_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/lineage/internal/app"
	"github.com/omlhub/oml/contexts/lineage/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
)

func TestProposeWorkareaEdge(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		from, to string
		want     errs.Code
	}{
		{"propose on one, read on both", "R", "P", ""},
		{"unknown endpoint", "P", "nowhere", errs.NotFound},
		{"unreadable endpoint is the same as unknown", "S", "P", errs.NotFound},
		{"propose on neither", "R", "R2", errs.Denied},
		{"a validated endpoint is frozen", "P", "V", errs.Frozen},
		{"one workarea twice", "P", "P-alias", errs.Validation},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.access.workareas["R2"] = app.Workarea{ID: "wa_r2", IDPath: "u.r2", Reader: true}
			b.access.workareas["P-alias"] = b.access.workareas["P"]
			e, err := b.svc.Propose(b.ctx, domain.Proposal{Kind: domain.KindWorkarea, Label: "relates_to", From: c.from, To: c.to})
			wantCode(t, err, c.want)
			if c.want != "" {
				if len(b.journal.types()) != 0 {
					t.Fatalf("a refused proposal was journalled: %v", b.journal.types())
				}
				return
			}
			stored, err := b.repo.EdgeGetForUpdate(b.ctx, tenant, e.ID)
			if err != nil || stored.State != domain.Pending || stored.From != "wa_r" || stored.To != "wa_p" ||
				stored.FromIDPath != "u.r" || stored.ProposerPrincipal != "pr_alice" {
				t.Fatalf("stored = %+v, %v", stored, err)
			}
			if got := b.journal.types(); !slices.Equal(got, []string{"workarea.relate_proposed"}) {
				t.Fatalf("journal = %v", got)
			}
		})
	}
}

func TestProposeClaimEdge(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		from, to string
		want     errs.Code
	}{
		{"propose on one endpoint's workarea", "art_p", "art_r", ""},
		{"propose on neither", "art_r", "art_r2", errs.Denied},
		{"a body-less endpoint is not found", "art_p", "art_bodyless", errs.NotFound},
		{"an unknown endpoint is not found", "art_unknown", "art_p", errs.NotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.claim("art_p", "u.p", app.Readable)
			b.claim("art_r", "u.r", app.Readable)
			b.claim("art_r2", "u.r", app.Readable)
			b.claim("art_bodyless", "u.s", app.BodyLess)
			e, err := b.svc.Propose(b.ctx, domain.Proposal{Kind: domain.KindClaim, Label: "supports", From: c.from, To: c.to})
			wantCode(t, err, c.want)
			if c.want == "" && (e.Kind != domain.KindClaim || e.FromIDPath != "u.p" || e.ToIDPath != "u.r") {
				t.Fatalf("edge = %+v", e)
			}
		})
	}
}

func TestProposeRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.claim("art_p", "u.p", app.Readable)
	b.claim("art_r", "u.r", app.Readable)
	p := domain.Proposal{Kind: domain.KindClaim, Label: "supports", From: "art_p", To: "art_r"}
	for _, c := range []struct {
		name string
		ctx  context.Context
		want errs.Code
	}{
		{"first proposal", b.ctx, ""},
		{"the same live proposal again", b.ctx, errs.EdgeExists},
		{"no caller", context.Background(), errs.AuthMissing},
		{"an operator key", auth.With(context.Background(), auth.Caller{TenantID: tenant, KeyID: "key_op", Role: "operator"}), errs.VerbCeiling},
	} {
		_, err := b.svc.Propose(c.ctx, p)
		if c.want == "" {
			wantCode(t, err, "")
			continue
		}
		if !errs.Is(err, c.want) {
			t.Fatalf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}

func TestClosureBound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	chain := []string{"art_0", "art_1", "art_2", "art_3", "art_4"}
	for i := range 4 {
		if err := b.svc.Declare(b.ctx, tenant, chain[i], []string{chain[i+1]}, now); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		limit int
		want  errs.Code
	}{
		{"whole closure within the bound", 4, ""},
		{"bound above the closure", 10, ""},
		{"one more than the bound", 3, errs.ClosureBound},
		{"far more than the bound", 1, errs.ClosureBound},
	} {
		ids, err := b.svc.Closure(b.ctx, tenant, "art_0", c.limit)
		if c.want != "" {
			if !errs.Is(err, c.want) || ids != nil {
				t.Fatalf("%s: %v, %v, want %s and no ids", c.name, ids, err, c.want)
			}
			continue
		}
		if err != nil || len(ids) != 4 {
			t.Fatalf("%s: %v, %v, want the 4 ancestors", c.name, ids, err)
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	review := app.Subtrees{Allow: []string{"u"}}
	for _, c := range []struct {
		name   string
		within app.Subtrees
		want   errs.Code
	}{
		{"both endpoints within", review, ""},
		{"one endpoint left the reviewer's subtrees", app.Subtrees{Allow: []string{"u"}, Deny: []string{"u.r"}}, errs.Denied},
		{"no review scope left", app.Subtrees{}, errs.Denied},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			e, err := b.svc.Propose(b.ctx, domain.Proposal{Kind: domain.KindWorkarea, Label: "continues", From: "P", To: "R"})
			wantCode(t, err, "")
			leased, ok, err := b.svc.NextForReview(b.ctx, tenant, "pr_bob", review, nil, now, now.Add(time.Minute))
			if err != nil || !ok || leased.ID != e.ID {
				t.Fatalf("NextForReview = %+v, %v, %v", leased, ok, err)
			}
			if _, ok, _ := b.svc.NextForReview(b.ctx, tenant, "pr_alice", review, nil, now.Add(time.Hour), now.Add(2*time.Hour)); ok {
				t.Fatal("the proposer's principal was served its own edge (R2)")
			}
			got, err := b.svc.Decide(b.ctx, tenant, e.ID, true, "key_bob", c.within)
			wantCode(t, err, c.want)
			stored, _ := b.repo.EdgeGetForUpdate(b.ctx, tenant, e.ID)
			if c.want != "" {
				if stored.State != domain.Pending {
					t.Fatalf("a refused verdict changed the edge: %+v", stored)
				}
				return
			}
			if got.State != domain.Ratified || stored.State != domain.Ratified {
				t.Fatalf("decided %+v, stored %+v", got, stored)
			}
			if _, err := b.svc.Decide(b.ctx, tenant, e.ID, false, "key_bob", c.within); !errs.Is(err, errs.ServeConsumed) {
				t.Fatalf("second verdict: %v, want %s", err, errs.ServeConsumed)
			}
			if types := b.journal.types(); !slices.Equal(types, []string{"workarea.relate_proposed", "workarea.relate_ratified"}) {
				t.Fatalf("journal = %v", types)
			}
		})
	}
}

// Closures judges each artifact by its own closure: one over the bound is
// refused, the others come back whole, whether the combined query stayed
// under its cap or fell back to one artifact at a time.
func TestClosures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// art_0 → art_1 → … → art_4 (four ancestors); art_9 → art_4 (one).
	for i := range 4 {
		if err := b.svc.Declare(b.ctx, tenant, fmt.Sprintf("art_%d", i), []string{fmt.Sprintf("art_%d", i+1)}, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.svc.Declare(b.ctx, tenant, "art_9", []string{"art_4"}, now); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		roots   []string
		limit   int
		refused []string
	}{
		{"all within the bound", []string{"art_0", "art_9", "art_3"}, 4, nil},
		{"one over the bound, under the cap", []string{"art_0", "art_9"}, 3, []string{"art_0"}},
		{"the cap reached: one at a time", []string{"art_0"}, 2, []string{"art_0"}},
	} {
		closures, refused, err := b.svc.Closures(b.ctx, tenant, c.roots, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.roots {
			if slices.Contains(c.refused, r) {
				if !errs.Is(refused[r], errs.ClosureBound) || closures[r] != nil {
					t.Fatalf("%s: %s: %v, %v, want review.closure_bound", c.name, r, closures[r], refused[r])
				}
				continue
			}
			one, err := b.svc.Closure(b.ctx, tenant, r, c.limit)
			if err != nil || refused[r] != nil || len(closures[r]) != len(one) {
				t.Fatalf("%s: %s: %v (%v), want %v", c.name, r, closures[r], refused[r], one)
			}
		}
	}
}
