package app

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// fakeRepo is an in-memory Repository.
type fakeRepo struct {
	mu       sync.Mutex
	sessions map[string]domain.Session
	active   map[[2]string]Active // (key, workarea)
}

func (r *fakeRepo) Insert(_ context.Context, s domain.Session) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.sessions {
		if o.WorkareaID == s.WorkareaID && o.Owner.PrincipalID == s.Owner.PrincipalID && o.Name == s.Name {
			return false, nil
		}
	}
	r.sessions[s.ID] = s
	return true, nil
}

func (r *fakeRepo) Get(ctx context.Context, tenant, id string) (domain.Session, error) {
	return r.GetForUpdate(ctx, tenant, id)
}

func (r *fakeRepo) GetForUpdate(_ context.Context, tenant, id string) (domain.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok || s.TenantID != tenant {
		return domain.Session{}, ErrNotFound
	}
	return s, nil
}

func (r *fakeRepo) ByOwnerNameForUpdate(_ context.Context, tenant, workarea, principal, name string) (domain.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sessions {
		if s.TenantID == tenant && s.WorkareaID == workarea && s.Owner.PrincipalID == principal && s.Name == name {
			return s, nil
		}
	}
	return domain.Session{}, ErrNotFound
}

func (r *fakeRepo) Update(_ context.Context, s domain.Session) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessions[s.ID] = s
	return nil
}

func (r *fakeRepo) LatestOfOwner(_ context.Context, tenant, workarea, principalID string, limit int) ([]domain.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []domain.Session
	for _, s := range r.sessions {
		if s.TenantID == tenant && s.WorkareaID == workarea && s.Owner.PrincipalID == principalID {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b domain.Session) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	return out[:min(limit, len(out))], nil
}

func (r *fakeRepo) List(_ context.Context, q ListQuery) ([]domain.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []domain.Session
	for _, s := range r.sessions {
		if s.TenantID == q.TenantID && q.Readable.Contains(s.WorkareaIDPath) &&
			(q.Under == "" || s.WorkareaIDPath == q.Under || strings.HasPrefix(s.WorkareaIDPath, q.Under+".")) &&
			(q.Status == "" || s.Status == q.Status) && (q.After == "" || s.ID < q.After) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b domain.Session) int { return strings.Compare(b.ID, a.ID) })
	return out[:min(len(out), q.Limit)], nil
}

func (r *fakeRepo) SetActive(_ context.Context, _, key, workarea, session string, at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active[[2]string{key, workarea}] = Active{WorkareaID: workarea, SessionID: session, SetAt: at}
	return nil
}

func (r *fakeRepo) ActiveOf(_ context.Context, _, key string) ([]Active, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Active
	for k, a := range r.active {
		if k[0] == key {
			out = append(out, a)
		}
	}
	return out, nil
}

func (r *fakeRepo) ClearActive(_ context.Context, _, session string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, a := range r.active {
		if a.SessionID == session {
			delete(r.active, k)
		}
	}
	return nil
}

// fakeAccess grants scopes per (key, workarea id); workareas are known by
// id or path.
type fakeAccess struct {
	workareas map[string]Workarea // by id and by path
	scopes    map[[2]string][]scope.Scope
	keys      map[string]auth.Caller
}

func (a fakeAccess) at(key, wa string) Workarea {
	w := a.workareas[wa]
	for _, s := range a.scopes[[2]string{key, w.ID}] {
		switch s {
		case scope.Reader:
			w.Reader = true
		case scope.Writer:
			w.Writer = true
		case scope.Admin:
			w.Admin = true
		}
	}
	return w
}

func (a fakeAccess) Workarea(ctx context.Context, ref string) (Workarea, error) {
	c, _ := auth.From(ctx)
	w := a.at(c.KeyID, ref)
	if w.ID == "" || !(w.Reader || w.Writer || w.Admin) {
		return Workarea{}, errs.New(errs.NotFound, "test", "no workarea")
	}
	return w, nil
}

func (a fakeAccess) Subtrees(ctx context.Context, s scope.Scope) (scope.Subtrees, error) {
	c, _ := auth.From(ctx)
	var out scope.Subtrees
	for k, ss := range a.scopes {
		if k[0] == c.KeyID && slices.Contains(ss, s) {
			out.Allow = append(out.Allow, a.workareas[k[1]].IDPath)
		}
	}
	return out, nil
}

func (a fakeAccess) KeyAt(ctx context.Context, keyID, workareaID string) (KeyAt, error) {
	c, _ := auth.From(ctx)
	k, ok := a.keys[keyID]
	if !ok || k.TenantID != c.TenantID {
		return KeyAt{}, errs.New(errs.NotFound, "test", "no key")
	}
	return KeyAt{KeyID: k.KeyID, PrincipalID: k.PrincipalID, Principal: k.Principal, Role: k.Role, Writer: a.at(keyID, workareaID).Writer}, nil
}

type fakeJournal struct {
	mu     sync.Mutex
	events []journal.Event
}

func (j *fakeJournal) Append(_ context.Context, _ string, e journal.Event) (journal.Appended, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, e)
	return journal.Appended{ID: "ev_" + strconv.Itoa(len(j.events))}, nil
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

type fakeTx struct{}

func (fakeTx) InTx(ctx context.Context, fn func(ctx context.Context) error) error { return fn(ctx) }

// fakeBrains is an in-memory Brains.
type fakeBrains struct {
	mu sync.Mutex
	m  map[string]map[string]domain.BrainEntry // session → path → entry
}

func (b *fakeBrains) Get(_ context.Context, _, session, path string) (domain.BrainEntry, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[session][path]
	if !ok {
		return e, ErrNotFound
	}
	return e, nil
}

func (b *fakeBrains) Version(ctx context.Context, tenant, session, path string) (string, error) {
	e, err := b.Get(ctx, tenant, session, path)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	return e.Version, err
}

func (b *fakeBrains) Put(_ context.Context, _, session string, e domain.BrainEntry, _ string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m[session] == nil {
		b.m[session] = map[string]domain.BrainEntry{}
	}
	b.m[session][e.Path] = e
	return nil
}

func (b *fakeBrains) Delete(_ context.Context, _, session, path string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.m[session][path]
	delete(b.m[session], path)
	return ok, nil
}

func (b *fakeBrains) Usage(_ context.Context, _, session, path string) (BrainUsage, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := BrainUsage{Entries: int64(len(b.m[session]))}
	for p, e := range b.m[session] {
		u.Bytes += e.Size
		if p == path {
			u.AtPath = e.Size
		}
	}
	return u, nil
}

func (b *fakeBrains) List(_ context.Context, _, session, prefix, after string, limit int) ([]domain.BrainEntry, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []domain.BrainEntry
	for p, e := range b.m[session] {
		if strings.HasPrefix(p, prefix) && p > after {
			e.Content = nil
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(x, y domain.BrainEntry) int { return strings.Compare(x.Path, y.Path) })
	return out[:min(limit, len(out))], nil
}

func (b *fakeBrains) Copy(_ context.Context, _, from, to string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[to] = maps.Clone(b.m[from])
	return nil
}

func (b *fakeBrains) Drop(_ context.Context, _, session string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, session)
	return nil
}

type fixture struct {
	svc                                *Service
	brains                             *fakeBrains
	repo                               *fakeRepo
	journal                            *fakeJournal
	alice, bob, reader, admin, foreign context.Context
}

func setup(t *testing.T) fixture {
	t.Helper()
	callers := map[string]auth.Caller{
		"alice":   {TenantID: "tn_1", KeyID: "key_alice", PrincipalID: "pr_alice", Principal: "alice", Role: "writer"},
		"bob":     {TenantID: "tn_1", KeyID: "key_bob", PrincipalID: "pr_bob", Principal: "bob", Role: "writer"},
		"reader":  {TenantID: "tn_1", KeyID: "key_reader", PrincipalID: "pr_reader", Principal: "reader", Role: "reader"},
		"admin":   {TenantID: "tn_1", KeyID: "key_admin", PrincipalID: "pr_admin", Principal: "admin", Role: "admin"},
		"foreign": {TenantID: "tn_2", KeyID: "key_foreign", PrincipalID: "pr_foreign", Principal: "foreign", Role: "writer"},
	}
	crew := Workarea{ID: "wa_crew", IDPath: "wa_root.wa_crew"}
	rw := []scope.Scope{scope.Reader, scope.Writer}
	acc := fakeAccess{
		workareas: map[string]Workarea{"wa_crew": crew, "universe.crew": crew},
		scopes: map[[2]string][]scope.Scope{
			{"key_alice", "wa_crew"}: rw, {"key_bob", "wa_crew"}: rw,
			{"key_reader", "wa_crew"}: {scope.Reader}, {"key_admin", "wa_crew"}: {scope.Reader, scope.Admin},
		},
		keys: map[string]auth.Caller{},
	}
	for _, c := range callers {
		acc.keys[c.KeyID] = c
	}
	repo := &fakeRepo{sessions: map[string]domain.Session{}, active: map[[2]string]Active{}}
	j := &fakeJournal{}
	brains := &fakeBrains{m: map[string]map[string]domain.BrainEntry{}}
	svc := New(Deps{Repo: repo, Brains: brains, Access: acc, Journal: j, Tx: fakeTx{}})
	ctx := func(name string) context.Context { return auth.With(context.Background(), callers[name]) }
	return fixture{svc: svc, brains: brains, repo: repo, journal: j,
		alice: ctx("alice"), bob: ctx("bob"), reader: ctx("reader"), admin: ctx("admin"), foreign: ctx("foreign")}
}

func (r *fakeRepo) Owned(_ context.Context, _, principal string, limit int) ([]string, error) {
	var out []string
	for _, s := range r.sessions {
		if s.Owner.PrincipalID == principal && s.Status != domain.Pruned && len(out) < limit {
			out = append(out, s.ID)
		}
	}
	return out, nil
}
