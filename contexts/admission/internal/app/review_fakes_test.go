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
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// The review fakes model what the serve ceremony relies on: the queue
// filter of ArtifactsQueue and the conditional lease of ArtifactLease
// (one mutex stands for the row lock), so two reviewers racing for one
// item meet the same rule as on Postgres.

type servedRow struct {
	serve   domain.Serve
	verdict domain.Verdict
}

type reviewRepo struct {
	app.Repository
	mu         sync.Mutex
	claims     map[string]domain.Claim
	serves     map[string]*servedRow
	selfSigned bool
	locked     map[string]bool // rows another transaction holds for now: a lease that does not wait passes over them
}

func (r *reviewRepo) ClaimGetForUpdate(_ context.Context, _, id string) (domain.Claim, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.claims[id]
	if !ok {
		return c, app.ErrNotFound
	}
	return c, nil
}

func (r *reviewRepo) ClaimUpdate(_ context.Context, c domain.Claim) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claims[c.ID] = c
	return nil
}

func (r *reviewRepo) Authors(_ context.Context, _ string, ids []string) (map[string]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for _, id := range ids {
		if c, ok := r.claims[id]; ok {
			out[id] = c.AuthorPrincipal
		}
	}
	return out, nil
}

func (r *reviewRepo) ClaimKeyLock(context.Context, string, string, string, string) error { return nil }

func (r *reviewRepo) PromotedVersions(_ context.Context, _, workarea, simulation, key string) ([]domain.Claim, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []domain.Claim
	for _, c := range r.claims {
		if c.WorkareaID == workarea && c.SimulationID == simulation && c.ClaimKey == key && c.State == domain.StatePromoted {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b domain.Claim) int { return a.Version - b.Version })
	return out, nil
}

func (r *reviewRepo) QueueCandidates(_ context.Context, _ string, f app.QueueFilter) ([]domain.Claim, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []domain.Claim
	for _, c := range r.claims {
		if c.State != domain.StateHeld || c.Expired(f.Now) || !f.Within.Contains(c.WorkareaIDPath) || slices.Contains(f.Skip, c.ID) ||
			(c.LeasedUntil != nil && c.LeasedUntil.After(f.Now)) {
			continue
		}
		judged := false
		for _, s := range r.serves {
			judged = judged || (s.serve.ArtifactID == c.ID && s.verdict != "" && s.serve.Reviewer.Principal == f.Principal)
		}
		if !judged {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b domain.Claim) int { return a.SubmittedAt.Compare(b.SubmittedAt) })
	return out[:min(len(out), f.Limit)], nil
}

func (r *reviewRepo) ServeInsert(_ context.Context, _ string, s domain.Serve, wait bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !wait && r.locked[s.ArtifactID] {
		return app.ErrConflict
	}
	if s.ArtifactID != "" {
		c := r.claims[s.ArtifactID]
		if c.State != domain.StateHeld || c.Expired(s.ServedAt) || (c.LeasedUntil != nil && c.LeasedUntil.After(s.ServedAt)) {
			return app.ErrConflict
		}
		until := s.ExpiresAt
		c.LeasedUntil = &until
		r.claims[c.ID] = c
	}
	r.serves[s.ID] = &servedRow{serve: s}
	return nil
}

func (r *reviewRepo) ServeGetForUpdate(_ context.Context, _, id string) (domain.Serve, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.serves[id]
	if !ok {
		return domain.Serve{}, app.ErrNotFound
	}
	return s.serve, nil
}

func (r *reviewRepo) ServeDecide(_ context.Context, _ string, s domain.Serve, v domain.Verdict, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.serves[s.ID] = &servedRow{serve: s, verdict: v}
	return nil
}

func (r *reviewRepo) ServeJudgedBy(_ context.Context, _, artifact, principal string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, row := range r.serves {
		if row.serve.ArtifactID == artifact && row.serve.Reviewer.Principal == principal && row.verdict != "" {
			return true, nil
		}
	}
	return false, nil
}

func (r *reviewRepo) PolicyAt(context.Context, string, string) (domain.Policy, error) {
	return domain.DefaultPolicy, nil
}

func (r *reviewRepo) PoliciesAt(_ context.Context, _ string, paths []string) (map[string]domain.Policy, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]domain.Policy, len(paths))
	for _, p := range paths {
		pol := domain.DefaultPolicy
		pol.SelfSignedDevelopment = r.selfSigned
		out[p] = pol
	}
	return out, nil
}

func (r *reviewRepo) SelfSignedDevelopment(context.Context, string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.selfSigned, nil
}

type reviewAccess struct {
	app.Access
	mu        sync.Mutex
	workareas map[string]app.Workarea // by id
	review    app.Subtrees
}

func (a *reviewAccess) Fence(context.Context) (scope.Fence, error) { return nil, nil }

func (a *reviewAccess) WorkareaByID(_ context.Context, id string) (app.Workarea, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w, ok := a.workareas[id]
	if !ok {
		return w, errs.New(errs.NotFound, "effective access", "no workarea %s", id)
	}
	return w, nil
}

func (a *reviewAccess) WorkareasByIDs(_ context.Context, ids []string) (map[string]app.Workarea, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]app.Workarea{}
	for _, id := range ids {
		if w, ok := a.workareas[id]; ok {
			out[id] = w
		}
	}
	return out, nil
}

func (a *reviewAccess) Subtrees(_ context.Context, s scope.Scope) (app.Subtrees, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s != scope.DreamerReview {
		return app.Subtrees{}, nil
	}
	return a.review, nil
}

// reviewLineage answers closures from a table, refusing one over the
// bound as lineage does.
type reviewLineage struct {
	app.Lineage
	mu       sync.Mutex
	closures map[string][]string
}

func (l *reviewLineage) Closure(_ context.Context, _, artifact string, limit int) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.closures[artifact]
	if len(c) > limit {
		return nil, errs.New(errs.ClosureBound, "R2", "closure of %s over %d", artifact, limit)
	}
	return slices.Clone(c), nil
}

// Closures is Closure for each artifact, as the real port answers.
func (l *reviewLineage) Closures(ctx context.Context, tenant string, artifacts []string, limit int) (map[string][]string, map[string]error, error) {
	closures, refused := map[string][]string{}, map[string]error{}
	for _, a := range artifacts {
		c, err := l.Closure(ctx, tenant, a, limit)
		if err != nil {
			refused[a] = err
			continue
		}
		closures[a] = c
	}
	return closures, refused, nil
}

func (l *reviewLineage) Parents(context.Context, string, string) ([]string, error) { return nil, nil }

func (l *reviewLineage) NextEdge(context.Context, string, string, app.Subtrees, []string, time.Time, time.Time) (app.Edge, bool, error) {
	return app.Edge{}, false, nil
}

// servingIndex records what the serving tier was told, in order.
type servingIndex struct {
	app.Index
	mu    sync.Mutex
	calls []string // "promoted <id>" | "withdrawn <id>"
}

func (x *servingIndex) Promoted(_ context.Context, c domain.Claim) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.calls = append(x.calls, "promoted "+c.ID)
	return nil
}

func (x *servingIndex) Withdrawn(_ context.Context, _, artifact string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.calls = append(x.calls, "withdrawn "+artifact)
	return nil
}

type lockedJournal struct {
	mu    sync.Mutex
	types []string
}

func (j *lockedJournal) Append(_ context.Context, _ string, e journal.Event) (journal.Appended, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.types = append(j.types, e.Type)
	return journal.Appended{}, nil
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type reviewBundle struct {
	svc     *app.Service
	repo    *reviewRepo
	access  *reviewAccess
	lineage *reviewLineage
	index   *servingIndex
	journal *lockedJournal
	clock   *time.Time
}

// Workareas under U.P, which bob and carol review: C committed, D
// development, V validated.
func setupReview(t *testing.T) reviewBundle {
	t.Helper()
	clock := t0
	b := reviewBundle{
		repo: &reviewRepo{claims: map[string]domain.Claim{}, serves: map[string]*servedRow{}},
		access: &reviewAccess{
			workareas: map[string]app.Workarea{
				"wa_c": {ID: "wa_c", IDPath: "U.P.C", Status: "committed"},
				"wa_d": {ID: "wa_d", IDPath: "U.P.D", Status: "development"},
				"wa_v": {ID: "wa_v", IDPath: "U.P.V", Status: "validated"},
				"wa_x": {ID: "wa_x", IDPath: "U.X", Status: "committed"},
			},
			review: app.Subtrees{Allow: []string{"U.P"}},
		},
		lineage: &reviewLineage{closures: map[string][]string{}},
		index:   &servingIndex{},
		journal: &lockedJournal{},
		clock:   &clock,
	}
	b.svc = app.New(app.Deps{
		Repo: b.repo, Access: b.access, Lineage: b.lineage, Index: b.index, Journal: b.journal, Tx: inline{},
		Reads: twice{}, Now: func() time.Time { return *b.clock },
	}, app.Config{ServeTTL: 10 * time.Minute, ClosureMax: 3})
	return b
}

// held stores a held version of claimKey by author in workarea, submitted
// at t0 plus age.
func (b reviewBundle) held(id, author, workarea, claimKey string, version int, age time.Duration) domain.Claim {
	c := domain.Claim{
		ID: id, TenantID: "tn", WorkareaID: workarea, WorkareaIDPath: b.access.workareas[workarea].IDPath,
		ClaimKey: claimKey, Version: version, Kind: domain.KindMemory, Verb: domain.VerbRemember, State: domain.StateHeld,
		AuthorKeyID: "key_" + author, AuthorPrincipal: "pr_" + author, RequiredApprovals: 1,
		SubmittedAt: t0.Add(age), HeldExpiresAt: t0.Add(7 * 24 * time.Hour),
	}
	b.repo.claims[id] = c
	return c
}

// promoted stores a promoted version, submitted an hour before t0.
func (b reviewBundle) promoted(id, author, workarea, claimKey string, version int) {
	c := b.held(id, author, workarea, claimKey, version, -time.Hour)
	c.State, c.PromotedAt = domain.StatePromoted, &c.SubmittedAt
	b.repo.claims[id] = c
}

func as(name string) context.Context {
	return auth.With(context.Background(), auth.Caller{TenantID: "tn", KeyID: "key_" + name, PrincipalID: "pr_" + name, Principal: name, Role: "writer"})
}
