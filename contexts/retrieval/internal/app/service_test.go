package app

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/retrieval/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/gate"
	"github.com/omlhub/oml/platform/scope"
)

// planRepo is a repository whose vector leg answers by plan: an overfetch
// finds only `overfetched` rows in scope, a filtered search finds them
// all. Every other call returns nothing. Methods recall does not call are
// left to the nil embedded interface.
type planRepo struct {
	Repository
	reach       int64
	overfetched int
	subtree     string // the subtree index SubtreeIndex reports
	plans       []domain.Search
	counted     []Filter // what Reachable was asked
}

func (r *planRepo) SubtreeIndex(context.Context, string, string, string) (string, int64, error) {
	return r.subtree, r.reach, nil
}

func (r *planRepo) QueryTerms(context.Context, string, string) ([]domain.TermStat, domain.Corpus, error) {
	return nil, domain.Corpus{Docs: r.reach, AllDocs: r.reach}, nil
}
func (r *planRepo) Reachable(_ context.Context, _ string, f Filter) (int64, error) {
	r.counted = append(r.counted, f)
	return r.reach, nil
}
func (r *planRepo) Vector(_ context.Context, _, _ string, _ int, _ []float32, _ Filter, limit int, s domain.Search) ([]string, error) {
	r.plans = append(r.plans, s)
	n := limit
	if s.Method == domain.Overfetch {
		n = r.overfetched
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("art_%02d", i)
	}
	return ids, nil
}
func (r *planRepo) HitsAndSteering(_ context.Context, tenant string, ids []string, _ Filter, _ int) ([]Entry, []Entry, error) {
	out := make([]Entry, len(ids))
	for i, id := range ids {
		out[i] = Entry{TenantID: tenant, ArtifactID: id, WorkareaID: "wa_1"}
	}
	return out, nil, nil
}
func (r *planRepo) LogRead(context.Context, ReadLog) error { return nil }
func (r *planRepo) ReadLogList(context.Context, string, ReadLogFilter) ([]ReadLog, error) {
	return nil, nil
}
func (r *planRepo) ReadLogPurge(context.Context, time.Time, int) (int64, error) { return 0, nil }

type oneWorkarea struct{}

func (oneWorkarea) Workarea(context.Context, string) (Workarea, error) {
	return Workarea{ID: "wa_1", IDPath: "u", Reader: true}, nil
}
func (oneWorkarea) Subtrees(context.Context, scope.Scope) (Subtrees, error) {
	return Subtrees{Allow: []string{"u"}}, nil
}
func (oneWorkarea) Paths(context.Context, []string) (map[string]string, error) {
	return map[string]string{"wa_1": "universe"}, nil
}

func (oneWorkarea) AdministersTenant(context.Context) error    { return nil }
func (oneWorkarea) Fence(context.Context) (scope.Fence, error) { return nil, nil }

type unitEmbedder struct{}

func (unitEmbedder) Model() string { return "unit" }
func (unitEmbedder) Dim() int      { return 2 }
func (unitEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, nil
}
func (unitEmbedder) EmbedQuery(context.Context, string, map[string]float32) ([]float32, error) {
	return []float32{1, 0}, nil
}

type noTx struct{}

func (noTx) InTx(ctx context.Context, fn func(context.Context) error) error { return fn(ctx) }

// An overfetch that finds fewer than k rows in scope (the query's
// neighbourhood lies outside it) is followed by a filtered search, whose
// rows are what recall returns; one that finds enough is not.
func TestShortOverfetchFallsBackToFilteredSearch(t *testing.T) {
	ctx := auth.With(context.Background(), auth.Caller{TenantID: "ten_1", KeyID: "key_1", Role: "agent"})
	for _, c := range []struct {
		overfetched int
		want        []domain.Method
		hits        int
		subtree     string
	}{
		{overfetched: 3, want: []domain.Method{domain.Overfetch, domain.Filtered}, hits: 10},
		{overfetched: 10, want: []domain.Method{domain.Overfetch}, hits: 10},
		// In a subtree's own index too; the filtered search that follows a
		// short walk there searches the shared index.
		{overfetched: 3, want: []domain.Method{domain.Overfetch, domain.Filtered}, hits: 10, subtree: "u"},
		{overfetched: 10, want: []domain.Method{domain.Overfetch}, hits: 10, subtree: "u"},
	} {
		repo := &planRepo{reach: 100_000, overfetched: c.overfetched, subtree: c.subtree}
		svc := New(Deps{Repo: repo, Access: oneWorkarea{}, Embedder: unitEmbedder{}, Tx: noTx{}})
		res, err := svc.Recall(ctx, domain.Query{Text: "wing flutter", Scope: "wa_1", K: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []domain.Method
		for _, p := range repo.plans {
			got = append(got, p.Method)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("overfetch finding %d: searches %v, want %v", c.overfetched, got, c.want)
		}
		if res.Plan.Method != c.want[len(c.want)-1] || len(res.Hits) != c.hits {
			t.Errorf("overfetch finding %d: plan %v with %d hits", c.overfetched, res.Plan, len(res.Hits))
		}
		if first := repo.plans[0]; first.Subtree != c.subtree {
			t.Errorf("overfetch finding %d, subtree index %q: first search %v", c.overfetched, c.subtree, first)
		}
		if last := repo.plans[len(repo.plans)-1]; last.Method == domain.Filtered && last.Subtree != "" {
			t.Errorf("a filtered search in a subtree's index: %v", last)
		}
	}
}

// txMarker is a unit of work that marks ctx, so a fake can tell whether
// it is called inside one.
type txMarker struct{}

type inTxKey struct{}

func (txMarker) InTx(ctx context.Context, fn func(context.Context) error) error {
	return fn(context.WithValue(ctx, inTxKey{}, true))
}

// watchedEmbedder records whether it was called inside a unit of work.
type watchedEmbedder struct {
	unitEmbedder
	inTx *bool
}

func (e watchedEmbedder) EmbedQuery(ctx context.Context, text string, w map[string]float32) ([]float32, error) {
	if ctx.Value(inTxKey{}) != nil {
		*e.inTx = true
	}
	return e.unitEmbedder.EmbedQuery(ctx, text, w)
}

// watchedRepo records whether a recall's statements ran inside a unit of
// work.
type watchedRepo struct {
	*planRepo
	inTx *bool
}

func (r watchedRepo) HitsAndSteering(ctx context.Context, tenant string, ids []string, steer Filter, limit int) ([]Entry, []Entry, error) {
	if ctx.Value(inTxKey{}) != nil {
		*r.inTx = true
	}
	return r.planRepo.HitsAndSteering(ctx, tenant, ids, steer, limit)
}

// The embedder may be a remote service: recall never embeds the query
// inside a transaction, and it opens none for its statements (each is its
// own, one round trip).
func TestRecallEmbedsAndReadsOutsideATransaction(t *testing.T) {
	t.Parallel()
	ctx := auth.With(context.Background(), auth.Caller{TenantID: "ten_1", KeyID: "key_1", Role: "agent"})
	var embeddedInTx, readInTx bool
	repo := watchedRepo{planRepo: &planRepo{reach: 100, overfetched: 10}, inTx: &readInTx}
	svc := New(Deps{Repo: repo, Access: oneWorkarea{}, Embedder: watchedEmbedder{inTx: &embeddedInTx}, Tx: txMarker{}})
	res, err := svc.Recall(ctx, domain.Query{Text: "wing flutter", Scope: "wa_1", K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if embeddedInTx {
		t.Fatal("the query was embedded inside a transaction")
	}
	if readInTx {
		t.Fatal("the hits were loaded inside a transaction")
	}
	if len(res.Hits) == 0 {
		t.Fatal("no hits: the vector leg did not run")
	}
}

// A filter's reachable rows are counted once and reused for ReachTTL: they
// only plan the legs. Another tenant's recall in the same scope counts its
// own.
func TestReachIsRemembered(t *testing.T) {
	repo := &planRepo{reach: 100_000, overfetched: 10}
	svc := New(Deps{Repo: repo, Access: oneWorkarea{}, Embedder: unitEmbedder{}, Tx: noTx{}})
	for _, tenant := range []string{"ten_1", "ten_1", "ten_2", "ten_1"} {
		ctx := auth.With(context.Background(), auth.Caller{TenantID: tenant, KeyID: "key_1", Role: "agent"})
		res, err := svc.Recall(ctx, domain.Query{Text: "wing flutter", Scope: "wa_1", K: 10})
		if err != nil {
			t.Fatal(err)
		}
		if res.Plan.Method != domain.Overfetch {
			t.Fatalf("%s: plan %v", tenant, res.Plan)
		}
	}
	if len(repo.counted) != 2 {
		t.Fatalf("reachable rows counted %d times for two tenants: %+v", len(repo.counted), repo.counted)
	}
}

// gatedRepo holds a recall inside its hits' load until hold is closed,
// telling entered when one is there; with panics set it panics there.
type gatedRepo struct {
	*planRepo
	entered chan struct{}
	hold    chan struct{}
	panics  bool
}

func (r gatedRepo) HitsAndSteering(ctx context.Context, tenant string, ids []string, steer Filter, limit int) ([]Entry, []Entry, error) {
	if r.panics {
		panic("repo")
	}
	select {
	case r.entered <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	<-r.hold
	return r.planRepo.HitsAndSteering(ctx, tenant, ids, steer, limit)
}

// countingEmbedder counts the queries it embeds.
type countingEmbedder struct {
	unitEmbedder
	n *atomic.Int64
}

func (e countingEmbedder) EmbedQuery(ctx context.Context, text string, w map[string]float32) ([]float32, error) {
	e.n.Add(1)
	return e.unitEmbedder.EmbedQuery(ctx, text, w)
}

// A recall takes a turn at the gate: past its size a recall waits before
// any of its work (its query is not embedded yet), and one whose request
// ends while it waits is refused with a retryable service.unavailable. A
// turn comes back when its recall ends, by a panic too.
func TestRecallTakesATurnAtTheGate(t *testing.T) {
	ctx := auth.With(context.Background(), auth.Caller{TenantID: "ten_1", KeyID: "key_1", Role: "agent"})
	repo := gatedRepo{planRepo: &planRepo{reach: 100, overfetched: 10}, entered: make(chan struct{}), hold: make(chan struct{})}
	var embedded atomic.Int64
	svc := New(Deps{Repo: repo, Access: oneWorkarea{}, Embedder: countingEmbedder{n: &embedded}, Tx: noTx{}, Gate: gate.New(1, "OML_RECALL_CONCURRENCY", gate.Instruments{})})
	q := domain.Query{Text: "wing flutter", Scope: "wa_1", K: 10}
	first := make(chan error, 1)
	go func() { _, err := svc.Recall(ctx, q); first <- err }()
	<-repo.entered

	waiting, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := svc.Recall(waiting, q)
	if e := errs.From(err); !errs.Is(err, errs.Unavailable) || !e.Retryable {
		t.Fatalf("a recall past the gate's size whose request ended: %v", err)
	}
	if embedded.Load() != 1 {
		t.Fatalf("%d queries embedded: the waiting recall did work before its turn", embedded.Load())
	}
	close(repo.hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}

	// The turn came back: a panicking recall takes it and gives it back.
	panicky := repo
	panicky.panics = true
	svc.Repo = panicky
	func() {
		defer func() { _ = recover() }()
		_, _ = svc.Recall(ctx, q)
	}()
	svc.Repo = repo
	done := make(chan error, 1)
	go func() { _, err := svc.Recall(ctx, q); done <- err }()
	<-repo.entered
	if err := <-done; err != nil {
		t.Fatalf("after a panic: %v", err)
	}
}

// logHeldRepo holds the first recall's read log until hold is closed.
type logHeldRepo struct {
	*planRepo
	calls   *atomic.Int64
	entered chan struct{}
	hold    chan struct{}
}

func (r logHeldRepo) LogRead(ctx context.Context, l ReadLog) error {
	if r.calls.Add(1) == 1 {
		close(r.entered)
		<-r.hold
	}
	return nil
}

// A recall's turn ends before its read log, which waits for other
// recalls' rows to commit: a recall held there does not hold the gate.
func TestRecallLeavesTheGateBeforeItsReadLog(t *testing.T) {
	ctx := auth.With(context.Background(), auth.Caller{TenantID: "ten_1", KeyID: "key_1", Role: "agent"})
	repo := logHeldRepo{planRepo: &planRepo{reach: 100, overfetched: 10}, calls: new(atomic.Int64), entered: make(chan struct{}), hold: make(chan struct{})}
	svc := New(Deps{Repo: repo, Access: oneWorkarea{}, Embedder: unitEmbedder{}, Tx: noTx{}, Gate: gate.New(1, "OML_RECALL_CONCURRENCY", gate.Instruments{})})
	q := domain.Query{Text: "wing flutter", Scope: "wa_1", K: 10}
	first := make(chan error, 1)
	go func() { _, err := svc.Recall(ctx, q); first <- err }()
	<-repo.entered
	soon, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := svc.Recall(soon, q); err != nil {
		t.Fatalf("a recall while another waits on its read log: %v", err)
	}
	close(repo.hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}
