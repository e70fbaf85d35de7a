package app_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/app"
	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/contexts/admission/internal/wire"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// The fakes implement what the submission pipeline uses; the embedded
// interfaces make any other call fail loudly.

type fakeRepo struct {
	app.Repository
	mu     sync.Mutex
	claims map[string]domain.Claim
}

func (r *fakeRepo) ClaimInsert(_ context.Context, c domain.Claim, _, _ []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.claims {
		if o.WorkareaID == c.WorkareaID && o.SimulationID == c.SimulationID && o.ClaimKey == c.ClaimKey && o.Version == c.Version && o.State != domain.StateErased {
			return app.ErrConflict
		}
	}
	r.claims[c.ID] = c
	return nil
}

func (r *fakeRepo) ClaimKeyHolder(_ context.Context, _, workarea, simulation, key string) (domain.Claim, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var best domain.Claim
	for _, c := range r.claims {
		if c.WorkareaID == workarea && c.SimulationID == simulation && c.ClaimKey == key && c.State != domain.StateErased && c.Version > best.Version {
			best = c
		}
	}
	if best.ID == "" {
		return best, app.ErrNotFound
	}
	return best, nil
}

// ClaimKeyLock needs no lock here: the fake serialises on its mutex.
func (r *fakeRepo) ClaimKeyLock(context.Context, string, string, string, string) error { return nil }

func (r *fakeRepo) ClaimKeyHead(_ context.Context, _, workarea, simulation, key string) (domain.Claim, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var best domain.Claim
	for _, c := range r.claims {
		live := c.State == domain.StateHeld || c.State == domain.StatePromoted
		if c.WorkareaID == workarea && c.SimulationID == simulation && c.ClaimKey == key && live && c.Version > best.Version {
			best = c
		}
	}
	if best.ID == "" {
		return best, app.ErrNotFound
	}
	return best, nil
}

func (r *fakeRepo) ClaimGet(_ context.Context, _, id string) (domain.Claim, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.claims[id]
	if !ok {
		return c, app.ErrNotFound
	}
	return c, nil
}

func (r *fakeRepo) ClaimsByIDs(_ context.Context, _ string, ids []string) ([]domain.Claim, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []domain.Claim
	for _, id := range ids {
		if c, ok := r.claims[id]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

func (r *fakeRepo) PolicyAt(context.Context, string, string) (domain.Policy, error) {
	p := domain.DefaultPolicy
	p.Scan = domain.ScanBlock
	return p, nil
}

type fakeAccess struct {
	app.Access
	workareas map[string]app.Workarea
	banned    bool
	// simulations the caller's key is in the audience of: id → the
	// simulation's workarea id path ("ended" ends it).
	simulations map[string]string
}

func (a fakeAccess) Fence(context.Context) (scope.Fence, error) {
	var f scope.Fence
	for id := range a.simulations {
		f = append(f, id)
	}
	return f, nil
}

func (a fakeAccess) Simulation(_ context.Context, id string) (string, error) {
	w, ok := a.simulations[id]
	switch {
	case !ok:
		return "", errs.New(errs.NotFound, "simulations are served only to their audience (D10)", "no simulation with that id for this key")
	case w == "ended":
		return "", errs.New(errs.SimulationEnded, "an ended simulation takes no new writes", "ended")
	}
	return w, nil
}

func (a fakeAccess) Workarea(_ context.Context, ref string) (app.Workarea, error) {
	w, ok := a.workareas[ref]
	if !ok {
		return w, errs.New(errs.NotFound, "effective access", "no readable workarea with that reference for this key")
	}
	return w, nil
}

func (a fakeAccess) Subtrees(context.Context, scope.Scope) (app.Subtrees, error) {
	return app.Subtrees{Allow: []string{"U.P"}}, nil
}

func (a fakeAccess) Banned(context.Context) (bool, string, error) { return a.banned, "spam", nil }

type fakeLineage struct {
	app.Lineage
	declared map[string][]string
}

func (l *fakeLineage) Declare(_ context.Context, _, artifact string, targets []string, _ time.Time) error {
	l.declared[artifact] = targets
	return nil
}

type recordingJournal struct{ types []string }

func (j *recordingJournal) Append(_ context.Context, _ string, e journal.Event) (journal.Appended, error) {
	j.types = append(j.types, e.Type)
	return journal.Appended{}, nil
}

// stagingIndex records what the serving tier was asked to stage.
type stagingIndex struct {
	app.Index
	staged map[string]bool
}

func (stagingIndex) Prepare(context.Context, string) (app.Prepared, error) { return "vec", nil }

func (x stagingIndex) Stage(_ context.Context, _, artifact string, p app.Prepared) error {
	x.staged[artifact] = p == "vec"
	return nil
}

type inline struct{}

func (inline) InTx(ctx context.Context, fn func(context.Context) error) error { return fn(ctx) }

// twice runs each fn twice, its first run's answer dropped, as
// pg.DB.Together does (the first run finds the fn's first read): the
// reads the service passes it must give the same answer both times.
type twice struct{}

func (twice) Together(ctx context.Context, fns ...func(context.Context) error) error {
	for _, fn := range fns {
		_ = fn(ctx)
	}
	for _, fn := range fns {
		if err := fn(ctx); err != nil {
			return err
		}
	}
	return nil
}

type signer struct{ key ed25519.PrivateKey }

func (s signer) Sign(msg []byte) []byte { return ed25519.Sign(s.key, msg) }

type bundle struct {
	index   stagingIndex
	svc     *app.Service
	repo    *fakeRepo
	lineage *fakeLineage
	journal *recordingJournal
	access  *fakeAccess
	ctx     context.Context
}

func setup(t *testing.T) bundle {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(nil)
	b := bundle{
		repo: &fakeRepo{claims: map[string]domain.Claim{}}, lineage: &fakeLineage{declared: map[string][]string{}},
		journal: &recordingJournal{}, index: stagingIndex{staged: map[string]bool{}},
		access: &fakeAccess{workareas: map[string]app.Workarea{
			"crew":     {ID: "wa_crew", IDPath: "U.P.C", Status: "committed", Reader: true, Writer: true},
			"frozen":   {ID: "wa_frozen", IDPath: "U.P.F", Status: "validated", Reader: true, Writer: true},
			"universe": {ID: "wa_u", IDPath: "U", Status: "committed", Root: true, Reader: true, Writer: true},
			"readonly": {ID: "wa_ro", IDPath: "U.P.R", Status: "committed", Reader: true},
		}},
		ctx: auth.With(context.Background(), auth.Caller{TenantID: "tn", KeyID: "key_w", PrincipalID: "pr_w", Role: "writer"}),
	}
	b.svc = app.New(app.Deps{
		Repo: b.repo, Access: b.access, Lineage: b.lineage, Index: b.index, Signer: signer{key}, Journal: b.journal, Tx: inline{},
		Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
	}, app.Config{MaxTextBytes: 1 << 10})
	return b
}

func remember(workarea, key, text string) domain.Submission {
	return domain.Submission{Verb: domain.VerbRemember, Workarea: workarea, ClaimKey: key, Text: text}
}

func TestSubmitHeld(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r, err := b.svc.Submit(b.ctx, remember("crew", "quote", "412 USD/t"))
	if err != nil {
		t.Fatal(err)
	}
	c := r.Claim
	if c.State != domain.StateHeld || c.Version != 1 || c.WorkareaID != "wa_crew" || c.RequiredApprovals != 1 ||
		!c.HeldExpiresAt.Equal(c.SubmittedAt.Add(7*24*time.Hour)) || len(c.Signature) != ed25519.SignatureSize {
		t.Fatalf("claim: %+v", c)
	}
	if len(b.journal.types) != 1 || b.journal.types[0] != "submission.remember" {
		t.Fatalf("journal: %v", b.journal.types)
	}
	if !b.index.staged[c.ID] {
		t.Fatal("the prepared embedding was not staged")
	}
}

func TestSubmitRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		sub  domain.Submission
		prep func(bundle)
		code errs.Code
	}{
		{"banned author", remember("crew", "k", "t"), func(b bundle) { b.access.banned = true }, errs.Banned},
		// The ban answers before anything wrong with the target.
		{"banned author, unknown workarea", remember("nowhere", "k", "t"), func(b bundle) { b.access.banned = true }, errs.Banned},
		{"banned author, validated workarea", remember("frozen", "k", "t"), func(b bundle) { b.access.banned = true }, errs.Banned},
		{"banned author, universe", remember("universe", "k", "t"), func(b bundle) { b.access.banned = true }, errs.Banned},
		{"banned author, no writer access", remember("readonly", "k", "t"), func(b bundle) { b.access.banned = true }, errs.Banned},
		{"unknown workarea", remember("nowhere", "k", "t"), nil, errs.NotFound},
		{"validated workarea", remember("frozen", "k", "t"), nil, errs.Frozen},
		{"universe", remember("universe", "k", "t"), nil, errs.Frozen},
		{"no writer access", remember("readonly", "k", "t"), nil, errs.Denied},
		{"text over the limit", remember("crew", "k", strings.Repeat("x", 2<<10)), nil, errs.LimitSize},
		{"scan under a block policy", remember("crew", "k", "AKIA"+strings.Repeat("Z", 16)), nil, errs.ScanBlocked},
		{"learn without lineage", domain.Submission{Verb: domain.VerbLearn, Workarea: "crew", ClaimKey: "k", Text: "t"}, nil, errs.LineageRequired},
		{"unknown lineage target", domain.Submission{Verb: domain.VerbLearn, Workarea: "crew", ClaimKey: "k", Text: "t", DerivesFrom: []string{ids.New(ids.Artifact)}}, nil, errs.NotFound},
		{"simulation outside its audience", domain.Submission{Verb: domain.VerbRemember, Workarea: "crew", ClaimKey: "k", Text: "t", SimulationID: "sim_1"}, nil, errs.NotFound},
		{"ended simulation", domain.Submission{Verb: domain.VerbRemember, Workarea: "crew", ClaimKey: "k", Text: "t", SimulationID: "sim_1"},
			func(b bundle) { b.access.simulations = map[string]string{"sim_1": "ended"} }, errs.SimulationEnded},
		{"workarea outside the simulation's subtree", domain.Submission{Verb: domain.VerbRemember, Workarea: "crew", ClaimKey: "k", Text: "t", SimulationID: "sim_1"},
			func(b bundle) { b.access.simulations = map[string]string{"sim_1": "U.P.R"} }, errs.SimulationFence},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if c.prep != nil {
				c.prep(b)
			}
			_, err := b.svc.Submit(b.ctx, c.sub)
			if !errs.Is(err, c.code) {
				t.Fatalf("err = %v, want %s", err, c.code)
			}
			if len(b.repo.claims) != 0 || len(b.journal.types) != 0 {
				t.Fatal("a refused submission wrote something")
			}
		})
	}
}

// TestSubmitSimulationFence: a simulation row is written only inside its
// simulation's subtree; lineage from it carries its id; its versions keep
// it; a key outside its audience cannot name it at all (D10).
func TestSubmitSimulationFence(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.access.simulations = map[string]string{"sim_1": "U.P"} // the crew is U.P.C
	sim := domain.Submission{Verb: domain.VerbRemember, Workarea: "crew", ClaimKey: "trial", Text: "what if", SimulationID: "sim_1"}
	row, err := b.svc.Submit(b.ctx, sim)
	if err != nil || row.Claim.SimulationID != "sim_1" {
		t.Fatalf("simulation write: %+v %v", row.Claim, err)
	}
	row.Claim.State = domain.StatePromoted
	b.repo.claims[row.Claim.ID] = row.Claim
	learn := domain.Submission{Verb: domain.VerbLearn, Workarea: "crew", ClaimKey: "outside", Text: "t", DerivesFrom: []string{row.Claim.ID}}
	if _, err := b.svc.Submit(b.ctx, learn); !errs.Is(err, errs.SimulationFence) {
		t.Fatalf("learning from a simulation row without its id: %v", err)
	}
	learn.SimulationID = "sim_1"
	if d, err := b.svc.Submit(b.ctx, learn); err != nil || d.Claim.SimulationID != "sim_1" {
		t.Fatalf("learning with its id: %+v %v", d.Claim, err)
	}
	if _, err := b.svc.Submit(b.ctx, domain.Submission{Verb: domain.VerbRemember, Workarea: "crew", Supersedes: row.Claim.ID, Text: "v2"}); !errs.Is(err, errs.SimulationFence) {
		t.Fatalf("a version outside the simulation: %v", err)
	}
	// A key outside the audience: the row is unknown, whatever it names.
	b.access.simulations = nil
	learn.SimulationID = ""
	learn.ClaimKey = "outside-2"
	if _, err := b.svc.Submit(b.ctx, learn); !errs.Is(err, errs.NotFound) {
		t.Fatalf("lineage to a fenced row: %v", err)
	}
	if _, err := b.svc.Submit(b.ctx, domain.Submission{Verb: domain.VerbRemember, Workarea: "crew", Supersedes: row.Claim.ID, Text: "v2"}); !errs.Is(err, errs.NotFound) {
		t.Fatalf("superseding a fenced row: %v", err)
	}
}

func TestSubmitLineageAndVersions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first, err := b.svc.Submit(b.ctx, remember("crew", "quote", "v1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Submit(b.ctx, remember("crew", "quote", "again")); !errs.Is(err, errs.ClaimKeyConflict) {
		t.Fatalf("taken key: %v", err)
	}
	v2, err := b.svc.Submit(b.ctx, domain.Submission{Verb: domain.VerbRemember, Workarea: "crew", Supersedes: first.Claim.ID, Text: "v2"})
	if err != nil || v2.Claim.Version != 2 || v2.Claim.ClaimKey != "quote" {
		t.Fatalf("supersede: %+v %v", v2.Claim, err)
	}
	learned, err := b.svc.Submit(b.ctx, domain.Submission{Verb: domain.VerbLearn, Workarea: "crew", ClaimKey: "anchor", Text: "t", DerivesFrom: []string{first.Claim.ID}})
	if err != nil || learned.Claim.Kind != domain.KindDerivedFact || len(b.lineage.declared[learned.Claim.ID]) != 1 {
		t.Fatalf("learn: %+v %v", learned, err)
	}
	// Another principal cannot supersede, nor derive from, a held claim.
	other := auth.With(context.Background(), auth.Caller{TenantID: "tn", KeyID: "key_o", PrincipalID: "pr_o", Role: "writer"})
	if _, err := b.svc.Submit(other, domain.Submission{Verb: domain.VerbRemember, Workarea: "crew", Supersedes: first.Claim.ID, Text: "x"}); !errs.Is(err, errs.NotFound) {
		t.Fatalf("foreign supersede: %v", err)
	}
	_, err = b.svc.Submit(other, domain.Submission{Verb: domain.VerbLearn, Workarea: "crew", ClaimKey: "z", Text: "t", DerivesFrom: []string{first.Claim.ID}})
	if !errs.Is(err, errs.NotFound) {
		t.Fatalf("derive from another's held claim: %v", err)
	}
	var e *errs.Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "derives_from[0]") {
		t.Fatalf("refusal names the target's position: %v", err)
	}
}

func TestOperatorsSubmitNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	op := auth.With(context.Background(), auth.Caller{TenantID: "tn", KeyID: "key_op", PrincipalID: "pr_op", Role: "operator"})
	if _, err := b.svc.Submit(op, remember("crew", "k", "t")); !errs.Is(err, errs.VerbCeiling) {
		t.Fatalf("operator submit: %v", err)
	}
	if _, err := b.svc.MyWork(op, app.Mine{}); !errs.Is(err, errs.VerbCeiling) {
		t.Fatalf("operator my_work: %v", err)
	}
}

// markingTx is a unit of work that marks ctx; watchedIndex records a
// Prepare (which may call an embedding service) made inside one.
type markingTx struct{}

type inTxKey struct{}

func (markingTx) InTx(ctx context.Context, fn func(context.Context) error) error {
	return fn(context.WithValue(ctx, inTxKey{}, true))
}

type watchedIndex struct {
	stagingIndex
	inTx *bool
}

func (x watchedIndex) Prepare(ctx context.Context, text string) (app.Prepared, error) {
	if ctx.Value(inTxKey{}) != nil {
		*x.inTx = true
	}
	return x.stagingIndex.Prepare(ctx, text)
}

// markingDoer is the idempotency store's shape: it opens the unit of work
// around the write.
type markingDoer struct{}

func (markingDoer) Do(ctx context.Context, _ idempotency.Scope, _ any, write func(context.Context) (any, error)) (idempotency.Result, error) {
	var res idempotency.Result
	err := markingTx{}.InTx(ctx, func(ctx context.Context) error {
		v, err := write(ctx)
		if err != nil {
			return err
		}
		res.Body, err = json.Marshal(v)
		return err
	})
	return res, err
}

// Preparing a submission's text may call a remote embedder: it happens
// before the unit of work (the idempotency record's included), never in it.
func TestSubmitPreparesOutsideTheUnitOfWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var inTx bool
	b.svc.Index, b.svc.Tx = watchedIndex{stagingIndex: b.index, inTx: &inTx}, markingTx{}
	if _, err := b.svc.Submit(b.ctx, remember("crew", "direct", "412 USD/t")); err != nil {
		t.Fatal(err)
	}
	in := wire.MemoryIn{Verb: "remember", Workarea: "crew", ClaimKey: "retried", Text: "405 USD/t"}
	if _, err := wire.Submit(b.ctx, b.svc, markingDoer{}, in, "run-1/step-2"); err != nil {
		t.Fatal(err)
	}
	if inTx {
		t.Fatal("a submission's text was prepared inside a unit of work")
	}
}
