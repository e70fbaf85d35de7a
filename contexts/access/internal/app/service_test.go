package app_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/contexts/access/internal/memstore"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

// fakeJournal records events; it is the journal port's test double.
type fakeJournal struct {
	mu     sync.Mutex
	events map[string][]journal.Event
}

func (j *fakeJournal) Append(_ context.Context, tenant string, e journal.Event) (journal.Appended, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events[tenant] = append(j.events[tenant], e)
	return journal.Appended{ID: ids.New(ids.Event)}, nil
}

func (j *fakeJournal) Verify(_ context.Context, tenant string) (journal.Report, error) {
	n := int64(len(j.events[tenant]))
	return journal.Report{Events: n, HeadSeq: n, OK: true}, nil
}

func (j *fakeJournal) types(tenant string) []string {
	var out []string
	for _, e := range j.events[tenant] {
		out = append(out, e.Type)
	}
	return out
}

// inline runs units of work directly: the fake store has no rollback.
type inline struct{}

func (inline) InTx(ctx context.Context, fn func(context.Context) error) error { return fn(ctx) }

type bundle struct {
	svc     *app.Service
	journal *fakeJournal
	admin   context.Context
	tenant  app.Bootstrapped
}

func setup(t *testing.T) bundle {
	t.Helper()
	j := &fakeJournal{events: map[string][]journal.Event{}}
	svc := app.New(memstore.New(), j, inline{}, func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) })
	b, err := svc.Bootstrap(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return bundle{svc: svc, journal: j, admin: as(t, svc, b.AdminKey), tenant: b}
}

// as authenticates token and returns a context carrying its caller.
func as(t *testing.T, svc *app.Service, token string) context.Context {
	t.Helper()
	c, err := svc.Authenticate(context.Background(), token)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	return auth.With(context.Background(), c)
}

func wantCode(t *testing.T, err error, code errs.Code) {
	t.Helper()
	if !errs.Is(err, code) {
		t.Fatalf("err = %v, want %s", err, code)
	}
}

// must unwraps a (value, error) result: must(f())(t).
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestBootstrap(t *testing.T) {
	t.Parallel()
	b := setup(t)
	info := must(b.svc.WorkareaInfo(b.admin, "universe"))(t)
	if info.Workarea.ID != b.tenant.RootWorkareaID || info.Workarea.Path != "universe" || !info.Workarea.IsRoot() {
		t.Fatalf("universe = %+v", info.Workarea)
	}
	if !slices.Contains(info.Verbs, "admin") || slices.Contains(info.Verbs, "remember") {
		t.Fatalf("admin verbs at universe = %v", info.Verbs)
	}
	want := []string{"tenant.create", "workarea.create", "key.issue", "grant.add", "grant.add"}
	if got := b.journal.types(b.tenant.TenantID); !slices.Equal(got, want) {
		t.Fatalf("journal = %v, want %v", got, want)
	}
	_, err := b.svc.Bootstrap(context.Background(), "acme")
	wantCode(t, err, errs.TenantExists)
	_, err = b.svc.Bootstrap(context.Background(), "Bad Name")
	wantCode(t, err, errs.Validation)
}

func TestWorkareaTreeAndAccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	proc := must(b.svc.CreateWorkarea(b.admin, app.CreateWorkarea{Parent: "universe", Name: "procurement"}))(t)
	crew := must(b.svc.CreateWorkarea(b.admin, app.CreateWorkarea{Parent: proc.Workarea.ID, Name: "metals-crew", Status: "committed",
		Crew: &domain.Crew{Name: "metals-crew"}}))(t)
	if crew.Workarea.Path != "universe.procurement.metals-crew" || crew.Workarea.Status != domain.StatusCommitted {
		t.Fatalf("crew workarea = %+v", crew.Workarea)
	}
	_, err := b.svc.CreateWorkarea(b.admin, app.CreateWorkarea{Parent: "universe", Name: "procurement"})
	wantCode(t, err, errs.WorkareaConflict)
	_, err = b.svc.CreateWorkarea(b.admin, app.CreateWorkarea{Parent: "universe", Name: "Bad Name"})
	wantCode(t, err, errs.Validation)

	w := must(b.svc.IssueKey(b.admin, "writer-1", "writer"))(t)
	writer := as(t, b.svc, w.Token)

	// No grants: the writer sees nothing, and nothing is indistinguishable
	// from a node that does not exist.
	_, errHidden := b.svc.WorkareaInfo(writer, crew.Workarea.ID)
	_, errMissing := b.svc.WorkareaInfo(writer, ids.New(ids.Workarea))
	wantCode(t, errHidden, errs.NotFound)
	if errs.From(errHidden).Public() != errs.From(errMissing).Public() {
		t.Fatalf("hidden and missing differ: %v vs %v", errHidden, errMissing)
	}

	must(b.svc.AddGrant(b.admin, app.AddGrant{KeyID: w.Key.ID, Workarea: "universe.procurement", Scope: "reader", Effect: "allow"}))(t)
	must(b.svc.AddGrant(b.admin, app.AddGrant{KeyID: w.Key.ID, Workarea: "universe.procurement", Scope: "writer", Effect: "allow"}))(t)
	info := must(b.svc.WorkareaInfo(writer, "universe.procurement"))(t)
	if len(info.Children) != 1 || !slices.Contains(info.Verbs, "remember") {
		t.Fatalf("before deny: children %v verbs %v", info.Children, info.Verbs)
	}
	deny := must(b.svc.AddGrant(b.admin, app.AddGrant{KeyID: w.Key.ID, Workarea: crew.Workarea.ID, Scope: "reader", Effect: "deny"}))(t)
	info = must(b.svc.WorkareaInfo(writer, "universe.procurement"))(t)
	if len(info.Children) != 0 || info.Epoch != deny.Epoch {
		t.Fatalf("after deny: children %v, epoch %d want %d", info.Children, info.Epoch, deny.Epoch)
	}
	_, err = b.svc.WorkareaInfo(writer, crew.Workarea.ID)
	wantCode(t, err, errs.NotFound)

	// The writer can see procurement but is no admin there.
	_, err = b.svc.CreateWorkarea(writer, app.CreateWorkarea{Parent: "universe.procurement", Name: "x"})
	wantCode(t, err, errs.Denied)
	// Universe is outside the writer's view entirely.
	_, err = b.svc.CreateWorkarea(writer, app.CreateWorkarea{Parent: "universe", Name: "x"})
	wantCode(t, err, errs.NotFound)

	// Removing the deny restores the child.
	must(b.svc.RemoveGrant(b.admin, deny.Grant.ID))(t)
	if info := must(b.svc.WorkareaInfo(writer, "universe.procurement"))(t); len(info.Children) != 1 {
		t.Fatalf("after removing the deny: %v", info.Children)
	}
	_, err = b.svc.RemoveGrant(b.admin, deny.Grant.ID)
	wantCode(t, err, errs.NotFound)
}

func TestStatusLadderAndFrozen(t *testing.T) {
	t.Parallel()
	b := setup(t)
	proc := must(b.svc.CreateWorkarea(b.admin, app.CreateWorkarea{Parent: "universe", Name: "procurement"}))(t)
	info := must(b.svc.UpdateWorkarea(b.admin, app.UpdateWorkarea{Ref: proc.Workarea.ID, Status: "validated"}))(t)
	if info.Workarea.Status != domain.StatusValidated || slices.Contains(info.Verbs, "remember") {
		t.Fatalf("validated: %+v %v", info.Workarea, info.Verbs)
	}
	_, err := b.svc.UpdateWorkarea(b.admin, app.UpdateWorkarea{Ref: proc.Workarea.ID, Status: "committed"})
	wantCode(t, err, errs.Frozen)
	_, err = b.svc.CreateWorkarea(b.admin, app.CreateWorkarea{Parent: proc.Workarea.ID, Name: "child"})
	wantCode(t, err, errs.Frozen)
	info = must(b.svc.UpdateWorkarea(b.admin, app.UpdateWorkarea{Ref: proc.Workarea.ID, SetCrew: true, Crew: &domain.Crew{Name: "c"}}))(t)
	if info.Workarea.Crew == nil || info.Workarea.Crew.Name != "c" {
		t.Fatalf("crew on a frozen node: %+v", info.Workarea.Crew)
	}
	_, err = b.svc.UpdateWorkarea(b.admin, app.UpdateWorkarea{Ref: "universe", Status: "validated"})
	wantCode(t, err, errs.Validation)
	_, err = b.svc.UpdateWorkarea(b.admin, app.UpdateWorkarea{Ref: proc.Workarea.ID})
	wantCode(t, err, errs.Validation)
}

func TestKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := must(b.svc.IssueKey(b.admin, "reader-1", "reader"))(t)
	reader := as(t, b.svc, r.Token)
	_, err := b.svc.IssueKey(reader, "x", "admin")
	wantCode(t, err, errs.VerbCeiling)
	_, err = b.svc.IssueKey(b.admin, "x", "root")
	wantCode(t, err, errs.Validation)
	_, err = b.svc.IssueKey(b.admin, "bad name!", "reader")
	wantCode(t, err, errs.Validation)

	keys := must(b.svc.ListKeys(b.admin))(t)
	if len(keys) != 2 {
		t.Fatalf("keys = %+v", keys)
	}
	epoch := must(b.svc.WorkareaInfo(b.admin, "universe"))(t).Epoch
	rev := must(b.svc.RevokeKey(b.admin, r.Key.ID))(t)
	if rev.Key.RevokedAt == nil || rev.Epoch != epoch+1 {
		t.Fatalf("revoke: %+v (epoch before %d)", rev, epoch)
	}
	_, err = b.svc.Authenticate(context.Background(), r.Token)
	wantCode(t, err, errs.AuthInvalid)
	_, err = b.svc.Authenticate(context.Background(), "oml_k_garbage")
	wantCode(t, err, errs.AuthInvalid)
	_, err = b.svc.RevokeKey(b.admin, ids.New(ids.Key))
	wantCode(t, err, errs.NotFound)
	admin := must(b.svc.Whoami(b.admin))(t)
	_, err = b.svc.RevokeKey(b.admin, admin.Caller.KeyID)
	wantCode(t, err, errs.Denied)
	_, err = b.svc.AddGrant(b.admin, app.AddGrant{KeyID: r.Key.ID, Workarea: "universe", Scope: "reader", Effect: "allow"})
	wantCode(t, err, errs.Validation)
}

func TestGrantsBumpEpoch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	k := must(b.svc.IssueKey(b.admin, "w", "writer"))(t)
	first := must(b.svc.AddGrant(b.admin, app.AddGrant{KeyID: k.Key.ID, Workarea: "universe", Scope: "reader", Effect: "allow"}))(t)
	again := must(b.svc.AddGrant(b.admin, app.AddGrant{KeyID: k.Key.ID, Workarea: "universe", Scope: "reader", Effect: "allow"}))(t)
	if !first.Created || again.Created || again.Grant.ID != first.Grant.ID || again.Epoch != first.Epoch {
		t.Fatalf("first %+v, again %+v", first, again)
	}
	for _, bad := range []app.AddGrant{
		{KeyID: k.Key.ID, Workarea: "universe", Scope: "superuser", Effect: "allow"},
		{KeyID: k.Key.ID, Workarea: "universe", Scope: "reader", Effect: "maybe"},
	} {
		_, err := b.svc.AddGrant(b.admin, bad)
		wantCode(t, err, errs.Validation)
	}
	_, err := b.svc.AddGrant(b.admin, app.AddGrant{KeyID: ids.New(ids.Key), Workarea: "universe", Scope: "reader", Effect: "allow"})
	wantCode(t, err, errs.NotFound)
	removed := must(b.svc.RemoveGrant(b.admin, first.Grant.ID))(t)
	if removed.Epoch != first.Epoch+1 {
		t.Fatalf("remove epoch %d, want %d", removed.Epoch, first.Epoch+1)
	}
}

func TestOperatorHasNoContentView(t *testing.T) {
	t.Parallel()
	b := setup(t)
	op := must(b.svc.IssueKey(b.admin, "ops", "operator"))(t)
	must(b.svc.AddGrant(b.admin, app.AddGrant{KeyID: op.Key.ID, Workarea: "universe", Scope: "reader", Effect: "allow"}))(t)
	_, err := b.svc.WorkareaInfo(as(t, b.svc, op.Token), "universe")
	wantCode(t, err, errs.VerbCeiling)
}

func TestTenantsAreIsolated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other, err := b.svc.Bootstrap(context.Background(), "globex")
	if err != nil {
		t.Fatal(err)
	}
	_, errForeign := b.svc.WorkareaInfo(b.admin, other.RootWorkareaID)
	_, errMissing := b.svc.WorkareaInfo(b.admin, ids.New(ids.Workarea))
	wantCode(t, errForeign, errs.NotFound)
	if errs.From(errForeign).Public() != errs.From(errMissing).Public() {
		t.Fatal("a foreign workarea is distinguishable from a missing one")
	}
	_, err = b.svc.RevokeKey(b.admin, other.AdminKeyID)
	wantCode(t, err, errs.NotFound)
}

// countingPaths counts the workarea path reads that reach the store.
type countingPaths struct {
	*memstore.Store
	reads [][]string
}

func (c *countingPaths) WorkareaPaths(ctx context.Context, tenant string, ids []string) (map[string]string, error) {
	c.reads = append(c.reads, slices.Clone(ids))
	return c.Store.WorkareaPaths(ctx, tenant, ids)
}

// Paths reads a workarea's path once and remembers it per tenant; another
// tenant's workarea or an unknown id is never answered, remembered or not.
func TestPathsAreRemembered(t *testing.T) {
	t.Parallel()
	store := &countingPaths{Store: memstore.New()}
	svc := app.New(store, &fakeJournal{events: map[string][]journal.Event{}}, inline{}, nil)
	acme := must(svc.Bootstrap(context.Background(), "acme"))(t)
	globex := must(svc.Bootstrap(context.Background(), "globex"))(t)
	asAcme, asGlobex := as(t, svc, acme.AdminKey), as(t, svc, globex.AdminKey)
	unknown := ids.New(ids.Workarea)

	ask := []string{acme.RootWorkareaID, acme.RootWorkareaID, globex.RootWorkareaID, unknown}
	for round := range 2 {
		got := must(svc.Paths(asAcme, ask))(t)
		if len(got) != 1 || got[acme.RootWorkareaID] != "universe" {
			t.Fatalf("round %d: %v", round, got)
		}
	}
	// The first round read the three distinct ids; the second only the two
	// that were not found.
	if len(store.reads) != 2 || len(store.reads[0]) != 3 || !slices.Equal(store.reads[1], []string{globex.RootWorkareaID, unknown}) {
		t.Fatalf("reads: %v", store.reads)
	}
	// Globex asking for acme's root, remembered for acme, gets nothing.
	if got := must(svc.Paths(asGlobex, []string{acme.RootWorkareaID, globex.RootWorkareaID}))(t); len(got) != 1 || got[globex.RootWorkareaID] != "universe" {
		t.Fatalf("globex: %v", got)
	}
}
