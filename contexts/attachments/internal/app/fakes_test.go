package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/attachments/internal/app"
	"github.com/omlhub/oml/contexts/attachments/internal/blobstore"
	"github.com/omlhub/oml/contexts/attachments/internal/domain"
	"github.com/omlhub/oml/contexts/attachments/internal/seal"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/journal"
)

// fakeRepo keeps sessions, blobs and bindings in memory with the
// conditions of the Postgres statements (a lease only on an open session
// without a live lease; progress only under the writer's lease; a close
// only of an open session; a bind once, of a complete one). The embedded
// interface fails loudly on anything else.
type fakeRepo struct {
	app.Repository
	mu       sync.Mutex
	sessions map[string]domain.Session
	leases   map[string]lease
	blobs    map[string]app.Blob // tenant + sha
	bindings []app.Binding
	limit    int64
	doomed   map[int64]app.Doomed
	// leased, when set, runs after a lease is granted (as another
	// process would act between the lease and the write).
	leased func(id string)
}

type lease struct {
	token string
	until time.Time
}

func newFakeRepo() *fakeRepo {
	return &fakeRepo{sessions: map[string]domain.Session{}, leases: map[string]lease{}, blobs: map[string]app.Blob{}, doomed: map[int64]app.Doomed{}}
}

func (r *fakeRepo) SessionInsert(_ context.Context, s domain.Session) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessions[s.ID] = s
	return nil
}

func (r *fakeRepo) SessionGet(_ context.Context, tenant, id string) (domain.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok || s.TenantID != tenant {
		return domain.Session{}, app.ErrNotFound
	}
	return s, nil
}

func (r *fakeRepo) SessionsForBind(_ context.Context, tenant string, ids []string) ([]domain.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []domain.Session
	for _, id := range ids {
		if s, ok := r.sessions[id]; ok && s.TenantID == tenant {
			out = append(out, s)
		}
	}
	return out, nil
}

func (r *fakeRepo) OpenCount(_ context.Context, tenant, keyID string, now time.Time) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.sessions {
		if s.TenantID == tenant && s.KeyID == keyID && s.State == domain.Open && s.ExpiresAt.After(now) {
			n++
		}
	}
	return n, nil
}

func (r *fakeRepo) TenantLimit(context.Context, string) (int64, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.limit, r.limit > 0, nil
}

func (r *fakeRepo) Lease(_ context.Context, _, id, token string, until, now time.Time) (domain.Session, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if l, held := r.leases[id]; !ok || s.State != domain.Open || (held && l.until.After(now)) {
		return domain.Session{}, false, nil
	}
	r.leases[id] = lease{token, until}
	if r.leased != nil {
		r.leased(id)
	}
	return s, true, nil
}

func (r *fakeRepo) SessionKeyForUpdate(_ context.Context, _, id, token string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok || s.State != domain.Open || r.leases[id].token != token {
		return nil, app.ErrLeaseLost
	}
	return s.WrappedKey, nil
}

func (r *fakeRepo) Release(_ context.Context, _, id, token string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.leases[id].token == token {
		delete(r.leases, id)
	}
	return nil
}

func (r *fakeRepo) Progress(_ context.Context, s domain.Session, token string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if stored, ok := r.sessions[s.ID]; !ok || stored.State != domain.Open || r.leases[s.ID].token != token {
		return app.ErrLeaseLost
	}
	if s.State != domain.Open {
		s.HashState, s.WrappedKey = nil, nil
	}
	r.sessions[s.ID] = s
	delete(r.leases, s.ID)
	return nil
}

func (r *fakeRepo) Close(_ context.Context, _, id string, state domain.State, reason string) (domain.Session, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok || s.State != domain.Open {
		return domain.Session{}, false, nil
	}
	s.State, s.Reason, s.WrappedKey, s.HashState = state, reason, nil, nil
	r.sessions[id] = s
	delete(r.leases, id)
	return s, true, nil
}

func (r *fakeRepo) LockAddress(context.Context, string, string) error { return nil }

func (r *fakeRepo) BlobGet(_ context.Context, tenant string, sha [32]byte) (app.Blob, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.blobs[tenant+string(sha[:])]
	if !ok {
		return app.Blob{}, app.ErrNotFound
	}
	return b, nil
}

func (r *fakeRepo) BlobInsert(_ context.Context, b app.Blob) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.blobs[b.TenantID+string(b.SHA256[:])] = b
	return nil
}

func (r *fakeRepo) SessionBind(_ context.Context, _, id string, at time.Time) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok || s.State != domain.Complete || s.BoundAt != nil {
		return false, nil
	}
	s.BoundAt = &at
	r.sessions[id] = s
	return true, nil
}

func (r *fakeRepo) BindingInsert(_ context.Context, b app.Binding) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bindings = append(r.bindings, b)
	return nil
}

func (r *fakeRepo) DoomedInsert(_ context.Context, d app.Doomed, _ time.Time) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := int64(len(r.doomed) + 1)
	for r.doomed[id].ObjectKey != "" {
		id++
	}
	d.ID = id
	r.doomed[id] = d
	return id, nil
}

func (r *fakeRepo) DoomedDelete(_ context.Context, id int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.doomed, id)
	return nil
}

type fakeAccess struct {
	app.Access
	writes bool
}

func (a fakeAccess) Writes(context.Context) (bool, error) { return a.writes, nil }

type fakeJournal struct {
	mu    sync.Mutex
	types []string
}

func (j *fakeJournal) Append(_ context.Context, _ string, e journal.Event) (journal.Appended, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.types = append(j.types, e.Type)
	return journal.Appended{}, nil
}

func (j *fakeJournal) has(typ string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Contains(j.types, typ)
}

type inline struct{}

func (inline) InTx(ctx context.Context, fn func(context.Context) error) error { return fn(ctx) }

const tenant = "tn_1"

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type bundle struct {
	svc     *app.Service
	repo    *fakeRepo
	journal *fakeJournal
	ctx     context.Context // alice, a writer
}

// setup returns a service on the fakes and a file blob store in a
// temporary directory; maxOpen bounds open sessions per key.
func setup(t testing.TB) bundle {
	t.Helper()
	master := make([]byte, 32)
	_, _ = rand.Read(master)
	keys, err := seal.NewKeys(seal.Secrets{Master: master})
	if err != nil {
		t.Fatal(err)
	}
	store, err := blobstore.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := bundle{repo: newFakeRepo(), journal: &fakeJournal{}, ctx: as("alice")}
	b.svc = app.New(app.Deps{
		Repo: b.repo, Store: store, Access: fakeAccess{writes: true}, Journal: b.journal, Tx: inline{}, Keys: keys,
		Now:    func() time.Time { return now },
		Config: app.Config{MaxSize: 64 << 20, MaxOpen: 2},
	})
	return b
}

func as(name string) context.Context {
	return auth.With(context.Background(), auth.Caller{TenantID: tenant, KeyID: "key_" + name, PrincipalID: "pr_" + name, Role: "writer"})
}

func (r *fakeRepo) BlobKeysAfter(_ context.Context, after app.WrappedKey, limit int) ([]app.WrappedKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []app.WrappedKey
	for _, b := range r.blobs {
		if b.TenantID > after.TenantID || b.TenantID == after.TenantID && string(b.SHA256[:]) > string(after.SHA256[:]) {
			out = append(out, app.WrappedKey{TenantID: b.TenantID, SHA256: b.SHA256, Address: b.Address, Wrapped: b.WrappedKey})
		}
	}
	slices.SortFunc(out, func(a, b app.WrappedKey) int {
		return strings.Compare(a.TenantID+string(a.SHA256[:]), b.TenantID+string(b.SHA256[:]))
	})
	return out[:min(limit, len(out))], nil
}

func (r *fakeRepo) SessionKeysAfter(_ context.Context, after app.WrappedKey, limit int) ([]app.WrappedKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []app.WrappedKey
	for _, s := range r.sessions {
		if s.WrappedKey != nil && (s.TenantID > after.TenantID || s.TenantID == after.TenantID && s.ID > after.Session) {
			out = append(out, app.WrappedKey{TenantID: s.TenantID, Session: s.ID, Address: s.Address, Wrapped: s.WrappedKey})
		}
	}
	slices.SortFunc(out, func(a, b app.WrappedKey) int { return strings.Compare(a.TenantID+a.Session, b.TenantID+b.Session) })
	return out[:min(limit, len(out))], nil
}

func (r *fakeRepo) RewrapKey(_ context.Context, k app.WrappedKey, next []byte) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k.Session != "" {
		s, ok := r.sessions[k.Session]
		if !ok || !bytes.Equal(s.WrappedKey, k.Wrapped) {
			return false, nil
		}
		s.WrappedKey = next
		r.sessions[k.Session] = s
		return true, nil
	}
	b, ok := r.blobs[k.TenantID+string(k.SHA256[:])]
	if !ok || !bytes.Equal(b.WrappedKey, k.Wrapped) {
		return false, nil
	}
	b.WrappedKey = next
	r.blobs[k.TenantID+string(k.SHA256[:])] = b
	return true, nil
}

func (r *fakeRepo) AddressSample(context.Context) (string, [32]byte, string, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sessions {
		return s.TenantID, s.ExpectedSHA256, s.Address, true, nil
	}
	return "", [32]byte{}, "", false, nil
}
