// Package repotest is the contract suite every app.Repository passes: the
// in-memory fake and the Postgres adapter run the same cases.
package repotest

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/platform/ids"
)

// Run runs the suite; newRepo returns an empty repository for one test.
func Run(t *testing.T, newRepo func(t *testing.T) app.Repository) {
	t.Run("tenants", func(t *testing.T) { t.Parallel(); tenants(t, newRepo(t)) })
	t.Run("keys", func(t *testing.T) { t.Parallel(); keys(t, newRepo(t)) })
	t.Run("workareas", func(t *testing.T) { t.Parallel(); workareas(t, newRepo(t)) })
	t.Run("grants", func(t *testing.T) { t.Parallel(); grants(t, newRepo(t)) })
	t.Run("concurrent identical grants", func(t *testing.T) { t.Parallel(); concurrentGrants(t, newRepo(t)) })
	t.Run("bans", func(t *testing.T) { t.Parallel(); bans(t, newRepo(t)) })
	t.Run("web credentials", func(t *testing.T) { t.Parallel(); webCredentials(t, newRepo(t)) })
	t.Run("grants on a workarea", func(t *testing.T) { t.Parallel(); grantsOn(t, newRepo(t)) })
	t.Run("readable workareas", func(t *testing.T) { t.Parallel(); readable(t, newRepo(t)) })
	t.Run("access at a workarea", func(t *testing.T) { t.Parallel(); accessAt(t, newRepo(t)) })
}

// accessAt: the snapshot with a workarea named by id or by path, the
// tenant's own only, the grants neither lost nor repeated.
func accessAt(t *testing.T, r app.Repository) {
	ctx := context.Background()
	f := seed(t, r)
	// Without grants: the one row of NULLs, and the root (no parent).
	if a, w, found, err := r.AccessAt(ctx, f.tenant, f.key.ID, f.root.ID, ""); err != nil || !found || w.ID != f.root.ID || w.ParentID != "" || len(a.Grants) != 0 {
		t.Fatalf("AccessAt(root) without grants = %+v, %+v, %v, %v", a, w, found, err)
	}
	if _, _, _, err := r.AccessAt(ctx, f.tenant, f.key.ID, f.child.ID, f.child.Path); err == nil {
		t.Fatal("AccessAt by id and by path at once answered")
	}
	for i, scope := range []domain.Scope{domain.ScopeReader, domain.ScopeWriter} {
		g := app.Grant{ID: ids.New(ids.Grant), KeyID: f.key.ID, WorkareaID: f.child.ID, Scope: scope, Effect: domain.Allow, CreatedAt: now.Add(time.Duration(i) * time.Second)}
		_, _, err := r.GrantCreate(ctx, f.tenant, g, f.key.ID)
		must(t, err)
	}
	want, err := r.AccessOf(ctx, f.tenant, f.key.ID)
	must(t, err)
	for _, ref := range [][2]string{{f.child.ID, ""}, {"", f.child.Path}} {
		a, w, found, err := r.AccessAt(ctx, f.tenant, f.key.ID, ref[0], ref[1])
		if err != nil || !found || w.ID != f.child.ID || w.Path != f.child.Path || w.IDPath != f.child.IDPath || w.ParentID != f.root.ID ||
			w.Crew == nil || w.Crew.Name != "crew" || len(a.Grants) != len(want.Grants) || a.Epoch != want.Epoch {
			t.Fatalf("AccessAt(%q) = %+v, %+v, %v, %v; AccessOf = %+v", ref, a, w, found, err, want)
		}
	}
	// Another tenant's workarea, by id or by path, is not found.
	other := domain.NewRoot(now)
	must(t, r.WorkareaCreate(ctx, f.other, other))
	if _, _, found, err := r.AccessAt(ctx, f.tenant, f.key.ID, other.ID, ""); err != nil || found {
		t.Fatalf("another tenant's workarea by id: %v, %v", found, err)
	}
	if a, _, found, err := r.AccessAt(ctx, f.tenant, f.key.ID, "", "universe.nowhere"); err != nil || found || len(a.Grants) != 2 {
		t.Fatalf("an unknown path: %+v, %v, %v", a, found, err)
	}
	if _, _, _, err := r.AccessAt(ctx, f.tenant, "key_unknown", f.child.ID, ""); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("an unknown key: %v", err)
	}
}

func webCredentials(t *testing.T, r app.Repository) {
	ctx := context.Background()
	f := seed(t, r)
	sel := randomBytes(t, 10)
	ver := make([]byte, 32)
	c := app.WebCredential{TenantID: f.tenant, ID: ids.New(ids.WebSession), KeyID: f.key.ID, Kind: app.WebSession,
		Verifier: ver, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	must(t, r.WebCredentialCreate(ctx, c, sel))
	got, err := r.WebCredentialBySelector(ctx, sel)
	must(t, err)
	if got.ID != c.ID || got.Kind != app.WebSession || got.Caller.KeyID != f.key.ID || got.Caller.Principal != "alice" || got.KeyRevoked || got.EndedAt != nil {
		t.Fatalf("loaded %+v", got)
	}
	if _, err := r.WebCredentialBySelector(ctx, []byte("nope-nope-")); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("unknown selector: %v", err)
	}
	// Ending: once, and never after expiry.
	if ok, err := r.WebCredentialEnd(ctx, f.tenant, c.ID, now.Add(2*time.Hour)); err != nil || ok {
		t.Fatalf("end after expiry: %v %v", ok, err)
	}
	if ok, err := r.WebCredentialEnd(ctx, f.other, c.ID, now); err != nil || ok {
		t.Fatalf("end in another tenant: %v %v", ok, err)
	}
	if ok, err := r.WebCredentialEnd(ctx, f.tenant, c.ID, now); err != nil || !ok {
		t.Fatalf("end: %v %v", ok, err)
	}
	if ok, _ := r.WebCredentialEnd(ctx, f.tenant, c.ID, now); ok {
		t.Fatal("ended twice")
	}
	// A key's live credentials end with it.
	sel2 := randomBytes(t, 10)
	c2 := c
	c2.ID = ids.New(ids.WebSession)
	must(t, r.WebCredentialCreate(ctx, c2, sel2))
	if n, err := r.WebCredentialsEndForKey(ctx, f.tenant, f.key.ID, now); err != nil || n != 1 {
		t.Fatalf("end for key: %d %v", n, err)
	}
	// Purge: nothing before the cutoff passes both, then both.
	if n, err := r.WebCredentialsPurge(ctx, now, 10); err != nil || n != 0 {
		t.Fatalf("early purge: %d %v", n, err)
	}
	if n, err := r.WebCredentialsPurge(ctx, now.Add(2*time.Hour), 1); err != nil || n != 1 {
		t.Fatalf("bounded purge: %d %v", n, err)
	}
	if n, err := r.WebCredentialsPurge(ctx, now.Add(2*time.Hour), 10); err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func grantsOn(t *testing.T, r app.Repository) {
	ctx := context.Background()
	f := seed(t, r)
	var made []string
	for i, scope := range []domain.Scope{domain.ScopeReader, domain.ScopeWriter} {
		g := app.Grant{ID: ids.New(ids.Grant), KeyID: f.key.ID, WorkareaID: f.child.ID, Scope: scope, Effect: domain.Allow, CreatedAt: now.Add(time.Duration(i) * time.Second)}
		id, _, err := r.GrantCreate(ctx, f.tenant, g, f.key.ID)
		must(t, err)
		must(t, r.GrantStampEpoch(ctx, f.tenant, id, int64(i+1), false))
		made = append(made, id)
	}
	list := func(tenant string, fl app.GrantFilter) []app.ListedGrant {
		t.Helper()
		if fl.Limit == 0 {
			fl.Limit = 10
		}
		got, err := r.GrantsList(ctx, tenant, fl)
		must(t, err)
		return got
	}
	// Ids order the listing (two minted in one millisecond may sort either
	// way round, so the expectations sort them too).
	sorted := slices.Sorted(slices.Values(made))
	got := list(f.tenant, app.GrantFilter{WorkareaID: f.child.ID, AtEpoch: -1})
	if len(got) != 2 || got[0].ID != sorted[0] || got[1].ID != sorted[1] || got[0].Principal != "alice" || got[0].WorkareaPath != f.child.Path {
		t.Fatalf("grants on child: %+v", got)
	}
	for _, g := range got {
		if want := int64(slices.Index(made, g.ID) + 1); g.CreatedEpoch == nil || *g.CreatedEpoch != want {
			t.Fatalf("grant %s created at epoch %v, want %d", g.ID, g.CreatedEpoch, want)
		}
	}
	if got := list(f.tenant, app.GrantFilter{KeyID: f.key.ID, AtEpoch: -1, Limit: 1}); len(got) != 1 || got[0].ID != sorted[0] {
		t.Fatalf("limit 1: %+v", got)
	}
	if got := list(f.tenant, app.GrantFilter{KeyID: f.key.ID, AtEpoch: -1, AfterID: sorted[0]}); len(got) != 1 || got[0].ID != sorted[1] {
		t.Fatalf("after the first: %+v", got)
	}
	if got := list(f.other, app.GrantFilter{WorkareaID: f.child.ID, AtEpoch: -1}); len(got) != 0 {
		t.Fatalf("another tenant's: %d", len(got))
	}
	// Removed at epoch 3: live now without it; in force at 1 (one), 2
	// (both), 3 (one), 0 (none).
	if removed, err := r.GrantRemove(ctx, f.tenant, made[0], f.key.ID, now); err != nil || !removed {
		t.Fatalf("remove: %v %v", removed, err)
	}
	must(t, r.GrantStampEpoch(ctx, f.tenant, made[0], 3, true))
	if got := list(f.tenant, app.GrantFilter{KeyID: f.key.ID, AtEpoch: -1}); len(got) != 1 || got[0].ID != made[1] {
		t.Fatalf("live after a removal: %+v", got)
	}
	for epoch, want := range map[int64]int{0: 0, 1: 1, 2: 2, 3: 1} {
		if got := list(f.tenant, app.GrantFilter{KeyID: f.key.ID, AtEpoch: epoch}); len(got) != want {
			t.Fatalf("at epoch %d: %d grants, want %d", epoch, len(got), want)
		}
	}
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// name derives a valid, unique tenant name from an id.
func name(prefix, id string) string { return prefix + "-" + strings.ToLower(ids.Suffix(id)) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type fixture struct {
	tenant, other string
	root, child   domain.Workarea
	key           app.Key
}

func seed(t *testing.T, r app.Repository) fixture {
	t.Helper()
	ctx := context.Background()
	f := fixture{tenant: ids.New(ids.Tenant), other: ids.New(ids.Tenant)}
	must(t, r.TenantCreate(ctx, f.tenant, name("t", f.tenant)))
	must(t, r.TenantCreate(ctx, f.other, name("o", f.other)))
	f.root = domain.NewRoot(now)
	must(t, r.WorkareaCreate(ctx, f.tenant, f.root))
	var err error
	f.child, err = domain.NewChild(f.root, "procurement", "", &domain.Crew{Name: "crew"}, now)
	must(t, err)
	must(t, r.WorkareaCreate(ctx, f.tenant, f.child))
	p, err := r.PrincipalEnsure(ctx, f.tenant, "alice")
	must(t, err)
	f.key = app.Key{ID: ids.New(ids.Key), Principal: p, Role: domain.RoleWriter, CreatedAt: now}
	tok, err := domain.NewToken()
	must(t, err)
	must(t, r.KeyCreate(ctx, f.tenant, f.key, tok.Selector, tok.Verifier, "test"))
	return f
}

func tenants(t *testing.T, r app.Repository) {
	ctx := context.Background()
	id := ids.New(ids.Tenant)
	must(t, r.TenantCreate(ctx, id, name("acme", id)))
	if err := r.TenantCreate(ctx, ids.New(ids.Tenant), name("acme", id)); !errors.Is(err, app.ErrConflict) {
		t.Fatalf("duplicate name: %v, want ErrConflict", err)
	}
	if e, err := r.EpochGet(ctx, id); err != nil || e != 0 {
		t.Fatalf("epoch = %d, %v", e, err)
	}
	if e, err := r.EpochBump(ctx, id); err != nil || e != 1 {
		t.Fatalf("bumped epoch = %d, %v", e, err)
	}
	a, err := r.PrincipalEnsure(ctx, id, "bob")
	must(t, err)
	b, err := r.PrincipalEnsure(ctx, id, "bob")
	must(t, err)
	if a.ID != b.ID || a.Name != "bob" {
		t.Fatalf("principal not stable: %+v %+v", a, b)
	}
}

func keys(t *testing.T, r app.Repository) {
	ctx := context.Background()
	f := seed(t, r)
	tok, _ := domain.NewToken()
	k := app.Key{ID: ids.New(ids.Key), Principal: f.key.Principal, Role: domain.RoleAdmin, CreatedAt: now}
	must(t, r.KeyCreate(ctx, f.tenant, k, tok.Selector, tok.Verifier, "test"))
	got, err := r.KeyBySelector(ctx, tok.Selector)
	must(t, err)
	if got.TenantID != f.tenant || got.Key.ID != k.ID || string(got.Verifier) != string(tok.Verifier) || got.Key.Principal.Name != "alice" {
		t.Fatalf("KeyBySelector = %+v", got)
	}
	if _, err := r.KeyBySelector(ctx, []byte("nope")); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("unknown selector: %v", err)
	}
	if _, err := r.KeyGet(ctx, f.other, k.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("foreign tenant key: %v", err)
	}
	list, err := r.KeyList(ctx, f.tenant)
	must(t, err)
	if len(list) != 2 {
		t.Fatalf("list = %d keys", len(list))
	}
	if ok, err := r.KeyRevoke(ctx, f.tenant, k.ID, now); err != nil || !ok {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if ok, err := r.KeyRevoke(ctx, f.tenant, k.ID, now); err != nil || ok {
		t.Fatalf("second revoke: %v %v", ok, err)
	}
	got, err = r.KeyBySelector(ctx, tok.Selector)
	must(t, err)
	if got.Key.RevokedAt == nil {
		t.Fatal("revoked key has no revoked_at")
	}
	if a, err := r.AccessOf(ctx, f.tenant, k.ID); err != nil || !a.Revoked {
		t.Fatalf("AccessOf a revoked key: %+v, %v", a, err)
	}
	if _, err := r.AccessOf(ctx, f.other, k.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("AccessOf in a foreign tenant: %v", err)
	}
}

func workareas(t *testing.T, r app.Repository) {
	ctx := context.Background()
	f := seed(t, r)
	w, err := r.WorkareaGet(ctx, f.tenant, f.child.ID)
	must(t, err)
	if w.Path != "universe.procurement" || w.IDPath != f.child.IDPath || w.ParentID != f.root.ID || w.Crew == nil || w.Crew.Name != "crew" {
		t.Fatalf("WorkareaGet = %+v", w)
	}
	if w, err := r.WorkareaByPath(ctx, f.tenant, "universe"); err != nil || w.ID != f.root.ID || !w.IsRoot() {
		t.Fatalf("WorkareaByPath(universe) = %+v, %v", w, err)
	}
	if got, err := r.WorkareasGet(ctx, f.tenant, []string{f.child.ID, "wa_unknown"}); err != nil || len(got) != 1 || got[0].ID != f.child.ID {
		t.Fatalf("WorkareasGet = %+v, %v", got, err)
	}
	if got, err := r.WorkareasGet(ctx, f.other, []string{f.child.ID}); err != nil || len(got) != 0 {
		t.Fatalf("WorkareasGet in another tenant = %+v, %v", got, err)
	}
	if _, err := r.WorkareaGet(ctx, f.other, f.child.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("foreign tenant: %v", err)
	}
	dup, _ := domain.NewChild(f.root, "procurement", "", nil, now)
	if err := r.WorkareaCreate(ctx, f.tenant, dup); !errors.Is(err, app.ErrConflict) {
		t.Fatalf("duplicate path: %v", err)
	}
	b, _ := domain.NewChild(f.root, "a-first", "", nil, now)
	must(t, r.WorkareaCreate(ctx, f.tenant, b))
	kids, err := r.WorkareaChildren(ctx, f.tenant, f.root.ID)
	must(t, err)
	if len(kids) != 2 || kids[0].Name != "a-first" || kids[1].Name != "procurement" {
		t.Fatalf("children = %+v", kids)
	}
	later := now.Add(time.Hour)
	w, err = r.WorkareaUpdate(ctx, f.tenant, f.child.ID, func(w *domain.Workarea) error {
		if err := w.SetStatus(domain.StatusCommitted, later); err != nil {
			return err
		}
		return w.SetCrew(nil, later)
	})
	must(t, err)
	stored, err := r.WorkareaGet(ctx, f.tenant, f.child.ID)
	must(t, err)
	if stored.Status != domain.StatusCommitted || stored.Crew != nil || !stored.UpdatedAt.Equal(later) || w.Status != stored.Status {
		t.Fatalf("after update: %+v", stored)
	}
	boom := errors.New("refused")
	if _, err := r.WorkareaUpdate(ctx, f.tenant, f.child.ID, func(*domain.Workarea) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("update error not passed through: %v", err)
	}
}

func grants(t *testing.T, r app.Repository) {
	ctx := context.Background()
	f := seed(t, r)
	if a, err := r.AccessOf(ctx, f.tenant, f.key.ID); err != nil || len(a.Grants) != 0 || a.Revoked {
		t.Fatalf("AccessOf a key without grants: %+v, %v", a, err)
	}
	g := app.Grant{ID: ids.New(ids.Grant), KeyID: f.key.ID, WorkareaID: f.child.ID, Scope: domain.ScopeReader, Effect: domain.Allow, CreatedAt: now}
	id, created, err := r.GrantCreate(ctx, f.tenant, g, "test")
	must(t, err)
	if id != g.ID || !created {
		t.Fatalf("first create: %s %v", id, created)
	}
	g2 := g
	g2.ID = ids.New(ids.Grant)
	id, created, err = r.GrantCreate(ctx, f.tenant, g2, "test")
	must(t, err)
	if id != g.ID || created {
		t.Fatalf("identical create: %s %v, want %s false", id, created, g.ID)
	}
	deny := app.Grant{ID: ids.New(ids.Grant), KeyID: f.key.ID, WorkareaID: f.root.ID, Scope: domain.ScopeWriter, Effect: domain.Deny, CreatedAt: now}
	_, _, err = r.GrantCreate(ctx, f.tenant, deny, "test")
	must(t, err)
	access, err := r.AccessOf(ctx, f.tenant, f.key.ID)
	must(t, err)
	if len(access.Grants) != 2 || access.Revoked {
		t.Fatalf("AccessOf = %+v", access)
	}
	for _, a := range access.Grants {
		if (a.ID == g.ID && a.IDPath != f.child.IDPath) || (a.ID == deny.ID && (a.IDPath != f.root.IDPath || a.Effect != domain.Deny)) {
			t.Fatalf("grant at %+v", a)
		}
	}
	if _, err := r.GrantGet(ctx, f.other, g.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("foreign grant: %v", err)
	}
	if ok, err := r.GrantRemove(ctx, f.tenant, g.ID, "test", now); err != nil || !ok {
		t.Fatalf("remove: %v %v", ok, err)
	}
	if ok, err := r.GrantRemove(ctx, f.tenant, g.ID, "test", now); err != nil || ok {
		t.Fatalf("second remove: %v %v", ok, err)
	}
	got, err := r.GrantGet(ctx, f.tenant, g.ID)
	must(t, err)
	if got.RemovedAt == nil || got.Scope != domain.ScopeReader {
		t.Fatalf("removed grant = %+v", got)
	}
	if a, _ := r.AccessOf(ctx, f.tenant, f.key.ID); len(a.Grants) != 1 {
		t.Fatalf("live grants after removal = %+v", a.Grants)
	}
	// A removed grant may be granted again.
	g3 := g
	g3.ID = ids.New(ids.Grant)
	if id, created, err := r.GrantCreate(ctx, f.tenant, g3, "test"); err != nil || !created || id != g3.ID {
		t.Fatalf("re-grant: %s %v %v", id, created, err)
	}
}

func concurrentGrants(t *testing.T, r app.Repository) {
	ctx := context.Background()
	f := seed(t, r)
	var created atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			g := app.Grant{ID: ids.New(ids.Grant), KeyID: f.key.ID, WorkareaID: f.child.ID, Scope: domain.ScopeWriter, Effect: domain.Allow, CreatedAt: now}
			_, ok, err := r.GrantCreate(ctx, f.tenant, g, "test")
			if err != nil {
				t.Error(err)
			}
			if ok {
				created.Add(1)
			}
		})
	}
	wg.Wait()
	if created.Load() != 1 {
		t.Fatalf("created %d grants, want 1", created.Load())
	}
}

func bans(t *testing.T, r app.Repository) {
	ctx := context.Background()
	f := seed(t, r)
	p, err := r.PrincipalByName(ctx, f.tenant, "alice")
	must(t, err)
	if _, err := r.PrincipalByName(ctx, f.other, "alice"); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("foreign principal: %v", err)
	}
	b := app.Ban{ID: ids.New(ids.Ban), Principal: p, Reason: "spam", CreatedBy: "key_x", CreatedAt: now}
	must(t, r.BanCreate(ctx, f.tenant, b))
	if err := r.BanCreate(ctx, f.tenant, app.Ban{ID: ids.New(ids.Ban), Principal: p, Reason: "again", CreatedBy: "key_x", CreatedAt: now}); !errors.Is(err, app.ErrConflict) {
		t.Fatalf("second live ban: %v", err)
	}
	// The live ban is part of the principal's keys' access snapshot, on
	// every grant's row and on the one row of a key without grants.
	if a, err := r.AccessOf(ctx, f.tenant, f.key.ID); err != nil || a.Ban == nil || *a.Ban != "spam" || len(a.Grants) != 0 {
		t.Fatalf("AccessOf with a live ban and no grants = %+v, %v", a, err)
	}
	for i, scope := range []domain.Scope{domain.ScopeReader, domain.ScopeWriter} {
		g := app.Grant{ID: ids.New(ids.Grant), KeyID: f.key.ID, WorkareaID: f.child.ID, Scope: scope, Effect: domain.Allow, CreatedAt: now.Add(time.Duration(i) * time.Second)}
		_, _, err := r.GrantCreate(ctx, f.tenant, g, f.key.ID)
		must(t, err)
	}
	if a, err := r.AccessOf(ctx, f.tenant, f.key.ID); err != nil || a.Ban == nil || *a.Ban != "spam" || len(a.Grants) != 2 {
		t.Fatalf("AccessOf with a live ban and two grants = %+v, %v", a, err)
	}
	if _, err := r.BanLift(ctx, f.other, b.ID, "key_x", now); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("lift from another tenant: %v", err)
	}
	if lifted, err := r.BanLift(ctx, f.tenant, b.ID, "key_x", now); err != nil || lifted.Principal.ID != p.ID {
		t.Fatalf("lift: %+v, %v", lifted, err)
	}
	if a, err := r.AccessOf(ctx, f.tenant, f.key.ID); err != nil || a.Ban != nil || len(a.Grants) != 2 {
		t.Fatalf("AccessOf after the lift = %+v, %v", a, err)
	}
	if list, err := r.BanList(ctx, f.tenant); err != nil || len(list) != 1 || list[0].LiftedAt == nil || list[0].Principal.Name != "alice" {
		t.Fatalf("BanList = %+v, %v", list, err)
	}
}

func readable(t *testing.T, r app.Repository) {
	ctx := context.Background()
	f := seed(t, r)
	list := func(tenant string, allow, deny []string, after string, limit int) []string {
		t.Helper()
		ws, err := r.WorkareasReadable(ctx, tenant, allow, deny, after, limit)
		must(t, err)
		var out []string
		for _, w := range ws {
			out = append(out, w.ID)
		}
		return out
	}
	root := []string{f.root.IDPath}
	if got := list(f.tenant, root, nil, "", 10); !slices.Equal(got, []string{f.root.ID, f.child.ID}) {
		t.Fatalf("under the root: %v", got)
	}
	if got := list(f.tenant, root, []string{f.child.IDPath}, "", 10); !slices.Equal(got, []string{f.root.ID}) {
		t.Fatalf("child denied: %v", got)
	}
	if got := list(f.tenant, []string{f.child.IDPath}, nil, "", 10); !slices.Equal(got, []string{f.child.ID}) {
		t.Fatalf("under the child: %v", got)
	}
	if got := list(f.tenant, root, nil, f.root.ID, 10); !slices.Equal(got, []string{f.child.ID}) {
		t.Fatalf("after the root: %v", got)
	}
	if got := list(f.tenant, root, nil, "", 1); !slices.Equal(got, []string{f.root.ID}) {
		t.Fatalf("limit 1: %v", got)
	}
	if got := list(f.other, root, nil, "", 10); len(got) != 0 {
		t.Fatalf("another tenant's: %v", got)
	}
	if got := list(f.tenant, nil, nil, "", 10); len(got) != 0 {
		t.Fatalf("no allow: %v", got)
	}
}
