package app_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/app"
	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
)

// R2: bob is served an item only when he wrote neither it nor anything in
// its closure, except a development item under the tenant switch, which
// is served marked self-signed.
func TestServeIndependence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		author     string
		workarea   string
		closure    []string // art_bob is bob's, art_carol carol's
		selfSigned bool     // the tenant switch
		served     bool
		marked     bool
	}{
		{"another's item", "alice", "wa_c", nil, false, true, false},
		{"another's item with an independent closure", "alice", "wa_c", []string{"art_carol"}, false, true, false},
		{"his own item", "bob", "wa_c", nil, false, false, false},
		{"author of something in the closure", "alice", "wa_c", []string{"art_carol", "art_bob"}, false, false, false},
		{"a closure member of unknown authorship", "alice", "wa_c", []string{"art_gone"}, false, false, false},
		{"own item in development with the switch", "bob", "wa_d", nil, true, true, true},
		{"closure author in development with the switch", "alice", "wa_d", []string{"art_bob"}, true, true, true},
		{"own item in development without the switch", "bob", "wa_d", nil, false, false, false},
		{"own item in a committed workarea with the switch", "bob", "wa_c", nil, true, false, false},
		{"a validated workarea", "alice", "wa_v", nil, false, false, false},
		{"outside his review subtrees", "alice", "wa_x", nil, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setupReview(t)
			b.promoted("art_bob", "bob", "wa_c", "bobs", 1)
			b.promoted("art_carol", "carol", "wa_c", "carols", 1)
			b.held("art_item", c.author, c.workarea, "item", 1, 0)
			b.lineage.closures["art_item"] = c.closure
			b.repo.selfSigned = c.selfSigned
			got, ok, err := b.svc.ServeNext(as("bob"))
			if err != nil {
				t.Fatal(err)
			}
			if ok != c.served || (ok && (got.Claim.ID != "art_item" || got.Serve.SelfSigned != c.marked)) {
				t.Fatalf("served %v (%s, self-signed %v), want served %v, self-signed %v", ok, got.Claim.ID, got.Serve.SelfSigned, c.served, c.marked)
			}
			if ok && !slices.Equal(got.Serve.Closure, c.closure) {
				t.Fatalf("the serve keeps closure %v, want %v", got.Serve.Closure, c.closure)
			}
			if want := map[bool]int{true: 1, false: 0}[ok]; len(b.journal.types) != want {
				t.Fatalf("journal = %v", b.journal.types)
			}
		})
	}
}

func TestServeRefusals(t *testing.T) {
	t.Parallel()
	t.Run("no review scope", func(t *testing.T) {
		t.Parallel()
		b := setupReview(t)
		b.access.review = app.Subtrees{}
		if _, _, err := b.svc.ServeNext(as("bob")); !errs.Is(err, errs.Denied) {
			t.Fatalf("%v, want %s", err, errs.Denied)
		}
	})
	t.Run("only a closure over the bound", func(t *testing.T) {
		t.Parallel()
		b := setupReview(t)
		b.held("art_big", "alice", "wa_c", "big", 1, 0)
		b.lineage.closures["art_big"] = []string{"art_1", "art_2", "art_3", "art_4"} // ClosureMax is 3
		if _, ok, err := b.svc.ServeNext(as("bob")); ok || !errs.Is(err, errs.ClosureBound) {
			t.Fatalf("%v, %v, want %s", ok, err, errs.ClosureBound)
		}
	})
	t.Run("a closure over the bound beside a servable item", func(t *testing.T) {
		t.Parallel()
		b := setupReview(t)
		b.held("art_big", "alice", "wa_c", "big", 1, -time.Hour) // older: tried first
		b.lineage.closures["art_big"] = []string{"art_1", "art_2", "art_3", "art_4"}
		b.held("art_small", "alice", "wa_c", "small", 1, 0)
		got, ok, err := b.svc.ServeNext(as("bob"))
		if err != nil || !ok || got.Claim.ID != "art_small" {
			t.Fatalf("served %s, %v, %v; want art_small", got.Claim.ID, ok, err)
		}
	})
	t.Run("nothing to serve", func(t *testing.T) {
		t.Parallel()
		b := setupReview(t)
		if _, ok, err := b.svc.ServeNext(as("bob")); ok || err != nil {
			t.Fatalf("%v, %v, want nothing and no error", ok, err)
		}
	})
}

// Two reviewers asking at once for the one item: one is served it.
func TestServeRace(t *testing.T) {
	t.Parallel()
	b := setupReview(t)
	b.held("art_item", "alice", "wa_c", "item", 1, 0)
	reviewers := []string{"bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var served []string
	for _, r := range reviewers {
		wg.Go(func() {
			got, ok, err := b.svc.ServeNext(as(r))
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				served = append(served, r+" "+got.Claim.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(served) != 1 {
		t.Fatalf("served %v, want exactly one reviewer", served)
	}
}

// A serve passes over an item whose row another transaction holds and
// takes the next; when nothing else is left it waits for that row rather
// than answer that there is nothing to review.
func TestServeLockedRow(t *testing.T) {
	t.Parallel()
	b := setupReview(t)
	b.held("art_first", "alice", "wa_c", "first", 1, 0)
	b.held("art_second", "alice", "wa_c", "second", 1, time.Minute)
	b.repo.locked = map[string]bool{"art_first": true}
	got, ok, err := b.svc.ServeNext(as("bob"))
	if err != nil || !ok || got.Claim.ID != "art_second" {
		t.Fatalf("served %v, %v, %v; want art_second, passing over the locked row", got.Claim.ID, ok, err)
	}
	got, ok, err = b.svc.ServeNext(as("carol"))
	if err != nil || !ok || got.Claim.ID != "art_first" {
		t.Fatalf("served %v, %v, %v; want art_first, waited for", got.Claim.ID, ok, err)
	}
}

// serve serves art_item to bob and returns the serve id.
func serve(t *testing.T, b reviewBundle) string {
	t.Helper()
	got, ok, err := b.svc.ServeNext(as("bob"))
	if err != nil || !ok {
		t.Fatalf("serve: %v, %v", ok, err)
	}
	return got.Serve.ID
}

// D14: the first verdict consumes the serve.
func TestVerdictServeCeremony(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		run  func(b reviewBundle, id string) error
		want errs.Code
	}{
		{"a second verdict", func(b reviewBundle, id string) error {
			if _, err := b.svc.Verdict(as("bob"), id, "reject", ""); err != nil {
				return err
			}
			_, err := b.svc.Verdict(as("bob"), id, "approve", "")
			return err
		}, errs.ServeConsumed},
		{"a late verdict", func(b reviewBundle, id string) error {
			*b.clock = t0.Add(10 * time.Minute)
			_, err := b.svc.Verdict(as("bob"), id, "approve", "")
			return err
		}, errs.ServeExpired},
		{"another key's serve", func(b reviewBundle, id string) error {
			_, err := b.svc.Verdict(as("carol"), id, "approve", "")
			return err
		}, errs.NotFound},
		{"an unknown serve", func(b reviewBundle, _ string) error {
			_, err := b.svc.Verdict(as("bob"), "srv_unknown", "approve", "")
			return err
		}, errs.NotFound},
		{"not a verdict", func(b reviewBundle, id string) error {
			_, err := b.svc.Verdict(as("bob"), id, "maybe", "")
			return err
		}, errs.Validation},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setupReview(t)
			b.held("art_item", "alice", "wa_c", "item", 1, 0)
			id := serve(t, b)
			if err := c.run(b, id); !errs.Is(err, c.want) {
				t.Fatalf("%v, want %s", err, c.want)
			}
			if c.name != "a second verdict" && b.repo.claims["art_item"].State != domain.StateHeld {
				t.Fatalf("a refused verdict changed the claim: %s", b.repo.claims["art_item"].State)
			}
		})
	}
}

// The verdict repeats what the serve decided, as things stand now.
func TestVerdictRechecks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		change func(b reviewBundle)
		want   errs.Code
	}{
		{"nothing changed", func(reviewBundle) {}, ""},
		{"the review grant was removed", func(b reviewBundle) { b.access.review = app.Subtrees{Allow: []string{"U.X"}} }, errs.Denied},
		{"the workarea was denied to him", func(b reviewBundle) {
			b.access.review = app.Subtrees{Allow: []string{"U.P"}, Deny: []string{"U.P.C"}}
		}, errs.Denied},
		{"the workarea was validated", func(b reviewBundle) {
			w := b.access.workareas["wa_c"]
			w.Status = "validated"
			b.access.workareas["wa_c"] = w
		}, errs.Frozen},
		{"the closure gained his claim", func(b reviewBundle) { b.lineage.closures["art_item"] = []string{"art_bob"} }, errs.NotIndependent},
		{"the closure grew over the bound", func(b reviewBundle) {
			b.lineage.closures["art_item"] = []string{"art_1", "art_2", "art_3", "art_4"}
		}, errs.ClosureBound},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setupReview(t)
			b.promoted("art_bob", "bob", "wa_c", "bobs", 1)
			b.held("art_item", "alice", "wa_c", "item", 1, 0)
			id := serve(t, b)
			c.change(b)
			d, err := b.svc.Verdict(as("bob"), id, "approve", "looks right")
			if c.want == "" {
				if err != nil || d.Claim.State != domain.StatePromoted || !slices.Equal(b.index.calls, []string{"promoted art_item"}) {
					t.Fatalf("%+v, %v; index %v", d.Claim.State, err, b.index.calls)
				}
				if last := b.journal.types[len(b.journal.types)-1]; last != "lifecycle.promote" {
					t.Fatalf("journal = %v", b.journal.types)
				}
				return
			}
			if !errs.Is(err, c.want) {
				t.Fatalf("%v, want %s", err, c.want)
			}
			if s := b.repo.claims["art_item"].State; s != domain.StateHeld || len(b.index.calls) != 0 || b.repo.serves[id].verdict != "" {
				t.Fatalf("a refused verdict left state %s, index %v, verdict %q", s, b.index.calls, b.repo.serves[id].verdict)
			}
		})
	}
}

// Recall serves the newest promoted version of a claim.
func TestVerdictSupersession(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		prep    func(b reviewBundle) // art_item is the held version bob judges
		verdict string
		want    []string
	}{
		{"a newer version withdraws the older", func(b reviewBundle) {
			b.promoted("art_v1", "alice", "wa_c", "quote", 1)
			b.held("art_item", "alice", "wa_c", "quote", 2, 0)
		}, "approve", []string{"promoted art_item", "withdrawn art_v1"}},
		{"an older version promoted late is withdrawn, not indexed", func(b reviewBundle) {
			b.promoted("art_v2", "alice", "wa_c", "quote", 2)
			b.held("art_item", "alice", "wa_c", "quote", 1, 0)
		}, "approve", []string{"withdrawn art_item"}},
		{"a rejection drops the staged row", func(b reviewBundle) {
			b.held("art_item", "alice", "wa_c", "quote", 1, 0)
		}, "reject", []string{"withdrawn art_item"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setupReview(t)
			c.prep(b)
			id := serve(t, b)
			if _, err := b.svc.Verdict(as("bob"), id, c.verdict, ""); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(b.index.calls, c.want) {
				t.Fatalf("index calls = %v, want %v", b.index.calls, c.want)
			}
		})
	}
}

// R2: one identity's verdict counts once per item, whichever of its keys
// holds the serve (a lapsed lease taken again by its second key).
func TestVerdictOncePerPrincipal(t *testing.T) {
	t.Parallel()
	b := setupReview(t)
	c := b.held("art_item", "alice", "wa_c", "item", 1, 0)
	c.RequiredApprovals = 2
	b.repo.claims[c.ID] = c
	got, ok, err := b.svc.ServeNext(as("bob"))
	if err != nil || !ok {
		t.Fatalf("serve: %v %v", ok, err)
	}
	if _, err := b.svc.Verdict(as("bob"), got.Serve.ID, "approve", ""); err != nil {
		t.Fatal(err)
	}
	// Bob's second key holds a live serve of the same item.
	second := domain.Serve{ID: "srv_second", ArtifactID: c.ID, Reviewer: domain.Reviewer{KeyID: "key_bob2", Principal: "pr_bob"},
		ServedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	b.repo.serves[second.ID] = &servedRow{serve: second}
	bob2 := auth.With(context.Background(), auth.Caller{TenantID: "tn", KeyID: "key_bob2", PrincipalID: "pr_bob", Principal: "bob", Role: "writer"})
	if _, err := b.svc.Verdict(bob2, second.ID, "approve", ""); !errs.Is(err, errs.NotIndependent) {
		t.Fatalf("a second verdict by one principal: %v", err)
	}
	if c := b.repo.claims[c.ID]; c.State != domain.StateHeld || c.Approvals != 1 {
		t.Fatalf("the item after the refusal: %s, %d approvals", c.State, c.Approvals)
	}
}
