package app_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/lineage/internal/app"
	"github.com/omlhub/oml/contexts/lineage/internal/memstore"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// fakeAccess answers the caller's scopes from two tables.
type fakeAccess struct {
	workareas map[string]app.Workarea // by ref
	subtrees  map[scope.Scope]app.Subtrees
}

func (a *fakeAccess) Workarea(_ context.Context, ref string) (app.Workarea, error) {
	if w, ok := a.workareas[ref]; ok {
		return w, nil
	}
	for _, w := range a.workareas { // by id, as the id paths name them
		if w.ID == ref {
			return w, nil
		}
	}
	return app.Workarea{}, errs.New(errs.NotFound, "test", "no workarea %s", ref)
}

func (a *fakeAccess) Subtrees(_ context.Context, s scope.Scope) (app.Subtrees, error) {
	return a.subtrees[s], nil
}

// fakeClaims holds claims as the caller sees them, in creation order.
type fakeClaims struct {
	refs  map[string]app.ClaimRef
	order []string
}

func (c *fakeClaims) add(r app.ClaimRef) {
	c.refs[r.ID] = r
	c.order = append(c.order, r.ID)
}

func (c *fakeClaims) Lookup(_ context.Context, ids []string) (map[string]app.ClaimRef, error) {
	out := map[string]app.ClaimRef{}
	for _, id := range ids {
		out[id] = c.refs[id] // unknown ids are the zero ClaimRef: Absent
	}
	return out, nil
}

func (c *fakeClaims) Recent(_ context.Context, idPath string, limit int) ([]app.ClaimRef, error) {
	var out []app.ClaimRef
	for _, id := range slices.Backward(c.order) {
		r := c.refs[id]
		if r.Visibility == app.Readable && (r.WorkareaIDPath == idPath || strings.HasPrefix(r.WorkareaIDPath, idPath+".")) && len(out) < limit {
			out = append(out, r)
		}
	}
	return out, nil
}

// fakeReads records graph reads.
type fakeReads struct {
	mu    sync.Mutex
	reads []app.GraphRead
}

func (r *fakeReads) GraphRead(_ context.Context, g app.GraphRead) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, g)
	return nil
}

// fakeJournal records events.
type fakeJournal struct {
	mu     sync.Mutex
	events []journal.Event
}

func (j *fakeJournal) Append(_ context.Context, _ string, e journal.Event) (journal.Appended, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, e)
	return journal.Appended{}, nil
}

func (j *fakeJournal) types() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	for _, e := range j.events {
		out = append(out, e.Type)
	}
	return out
}

const tenant = "tn_1"

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type bundle struct {
	svc     *app.Service
	repo    *memstore.Store
	access  *fakeAccess
	claims  *fakeClaims
	reads   *fakeReads
	journal *fakeJournal
	ctx     context.Context // carries alice, a writer
}

// setup returns a service on fakes: workareas P (alice reads and
// proposes), R (alice reads), V (validated, reads and proposes), S (she
// cannot read); claims are added per test.
func setup(t *testing.T) bundle {
	t.Helper()
	b := bundle{
		repo: memstore.New(),
		access: &fakeAccess{
			workareas: map[string]app.Workarea{
				"P": {ID: "wa_p", IDPath: "u.p", Status: "development", Reader: true, Propose: true},
				"R": {ID: "wa_r", IDPath: "u.r", Status: "development", Reader: true},
				"V": {ID: "wa_v", IDPath: "u.v", Status: "validated", Reader: true, Propose: true},
				"S": {ID: "wa_s", IDPath: "u.s", Status: "development"},
			},
			subtrees: map[scope.Scope]app.Subtrees{
				scope.Reader:         {Allow: []string{"u.p", "u.r"}},
				scope.DreamerPropose: {Allow: []string{"u.p"}},
			},
		},
		claims:  &fakeClaims{refs: map[string]app.ClaimRef{}},
		reads:   &fakeReads{},
		journal: &fakeJournal{},
		ctx:     auth.With(t.Context(), auth.Caller{TenantID: tenant, KeyID: "key_alice", PrincipalID: "pr_alice", Principal: "alice", Role: "writer"}),
	}
	b.svc = app.New(app.Deps{
		Repo: b.repo, Access: b.access, Claims: b.claims, Reads: b.reads, Journal: b.journal, Tx: memstore.Tx{},
		Now: func() time.Time { return now },
	})
	return b
}

// claim adds a claim in the workarea at idPath with the given visibility.
func (b bundle) claim(id, idPath string, v app.Visibility) {
	b.claims.add(app.ClaimRef{ID: id, Kind: "fact", State: "promoted", WorkareaIDPath: idPath, Visibility: v})
}

func wantCode(t *testing.T, err error, code errs.Code) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errs.Is(err, code) {
		t.Fatalf("error = %v, want %s", err, code)
	}
}
