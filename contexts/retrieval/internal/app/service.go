package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"time"

	"github.com/omlhub/oml/contexts/retrieval/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/expiring"
	"github.com/omlhub/oml/platform/gate"
	"github.com/omlhub/oml/platform/scope"
)

// Deps are the service's ports.
type Deps struct {
	Repo Repository
	// SearchRepo and Sessions serve search (nil: recall only).
	SearchRepo SearchRepo
	Sessions   Sessions
	Access     Access
	Embedder   Embedder
	Tx         Transactor
	Now        func() time.Time
	Fusion     domain.Fusion
	// Feedback is the vector leg's pseudo-relevance feedback; the zero
	// value turns it off (the module wires domain.DefaultFeedback).
	Feedback domain.Feedback
	// Gate bounds the recalls that run at once (nil: no bound); the
	// module sizes it from OML_RECALL_CONCURRENCY.
	Gate *gate.Gate
}

// Service is the retrieval context's application service.
type Service struct {
	Deps
	// reach remembers how many rows a filter reached (reachable).
	reach *expiring.Map[[sha256.Size]byte, int64]
}

// New returns a service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Fusion == (domain.Fusion{}) {
		d.Fusion = domain.DefaultFusion
	}
	return &Service{Deps: d, reach: expiring.New[[sha256.Size]byte, int64](ReachTTL, maxReach)}
}

// ReachTTL is how long a server reuses the count of rows a filter
// reaches. The count only plans the legs (how many lexemes select
// candidates, exact scan or index walk, how wide the walk); every row a
// recall returns is tested against the filter itself. So a count that is
// seconds old can make a recall slower (a scope that grew past the exact
// scan's threshold is scanned exactly until it expires), never wider.
// Reusing it saves a statement per recall: summing a tenant's 1,111
// workarea counts for the whole tree took 0.6 ms (docs/BENCHMARKS.md).
const ReachTTL = 10 * time.Second

// maxReach bounds the remembered counts.
const maxReach = 10_000

// reachable is Repo.Reachable, remembered for ReachTTL per tenant and
// filter (scope, allow and deny lists; a count does not depend on the
// fence).
func (s *Service) reachable(ctx context.Context, tenant string, f Filter) (int64, error) {
	h := sha256.New()
	for _, part := range append(append([]string{tenant, f.Scope, strconv.Itoa(len(f.Allow))}, f.Allow...), f.Deny...) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	if n, ok := s.reach.Get(key); ok {
		return n, nil
	}
	n, err := s.Repo.Reachable(ctx, tenant, f)
	if err != nil {
		return 0, err
	}
	s.reach.Put(key, n)
	return n, nil
}

// Prepare embeds a submission's text, outside any database transaction, so
// that promotion later needs no embedding call. The result is carried by
// admission and handed back to Stage.
func (s *Service) Prepare(ctx context.Context, text string) (Prepared, error) {
	vecs, err := s.Embedder.EmbedDocuments(ctx, []string{text})
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{Vector: vecs[0], Model: s.Embedder.Model()}, nil
}

// Prepared is an embedding computed ahead of its transaction.
type Prepared struct {
	Vector []float32
	Model  string
}

// Stage keeps a held claim's embedding until its promotion (in the
// submission's unit of work).
func (s *Service) Stage(ctx context.Context, tenant, artifact string, p Prepared) error {
	if len(p.Vector) == 0 {
		return nil
	}
	return s.Repo.Stage(ctx, tenant, artifact, p.Vector, p.Model)
}

// Promoted puts a claim into the serving tier in the promoting unit of
// work, so recall sees it at commit.
func (s *Service) Promoted(ctx context.Context, e Entry) error {
	return s.Repo.Index(ctx, e)
}

// Withdrawn takes a claim out of the serving tier (demote, erase) or drops
// its staged embedding (reject, expire), in the caller's unit of work.
func (s *Service) Withdrawn(ctx context.Context, tenant, artifact string) error {
	return s.Repo.Remove(ctx, tenant, artifact)
}

// Result is a recall's answer: steering first, never ranked; then hits.
type Result struct {
	Steering []Shown
	Hits     []Shown
	Plan     domain.Search
}

// Shown is an entry as recall shows it.
type Shown struct {
	Entry        Entry
	WorkareaPath string
	Score        float64
}

// Recall searches promoted memory in the scope's subtree, intersected with
// the caller's read access (D7, D12, R3). Steering rows of the scope, its
// ancestors and its subtree come first, unranked; hits fuse a full-text
// leg and a vector leg by reciprocal rank. Every recall is logged.
func (s *Service) Recall(ctx context.Context, q domain.Query) (Result, error) {
	c, err := auth.ContentCaller(ctx, "recall")
	if err != nil {
		return Result{}, err
	}
	if err := q.Validate(); err != nil {
		return Result{}, err
	}
	// The rest, up to the read log, takes a turn at the gate. Past a few
	// recalls at once a small machine does less work in all: more
	// runnable Postgres backends and query embeddings than cores contend
	// for them and their caches. So the rest wait here (docs/BENCHMARKS.md,
	// "Recalls a few at a time"). With a remote embedder the module sets
	// no gate, as its answers would hold turns. The turn ends before the
	// read log, which waits for a commit of other recalls' rows too.
	leave, err := s.Gate.Enter(ctx)
	if err != nil {
		return Result{}, err
	}
	defer leave()
	where, err := s.Access.Workarea(ctx, q.Scope)
	if err != nil {
		return Result{}, err
	}
	if !where.Reader {
		return Result{}, errs.New(errs.NotFound, "effective access (D7); unknown and out-of-scope are indistinguishable",
			"no readable workarea with that reference for this key")
	}
	readable, err := s.Access.Subtrees(ctx, scope.Reader)
	if err != nil {
		return Result{}, err
	}
	// Steering looks up the tree too (ancestors the key reads); hits stay
	// under the scope.
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return Result{}, err
	}
	steerFilter := Filter{Scope: where.IDPath, Allow: readable.Allow, Deny: readable.Deny, Fence: fence}
	hitFilter := Filter{Scope: where.IDPath, Allow: domain.Narrow(where.IDPath, readable.Allow), Deny: readable.Deny, Fence: fence}

	// The query's statistics and its embedding come first: the embedder
	// may be a remote service.
	var pq preparedQuery
	if len(hitFilter.Allow) > 0 {
		if pq, err = s.prepareQuery(ctx, c.TenantID, q); err != nil {
			return Result{}, err
		}
	}
	// The legs and the hits run as statements of their own, each its own
	// transaction in one round trip: a read snapshot around them cost two
	// more (BEGIN, COMMIT) and decided nothing a recall may show. Every
	// leg applies the filter itself, an entry's workarea and simulation
	// never change, and a hit withdrawn after its leg ran is not loaded.
	// A recall that races a promotion or a withdrawal may miss the entry
	// in one leg or drop it from the hits, as a recall a moment earlier or
	// later would.
	res, err := s.recall(ctx, c.TenantID, q, pq, steerFilter, hitFilter)
	if err != nil {
		return Result{}, err
	}
	if err := s.paths(ctx, &res); err != nil {
		return Result{}, err
	}
	sum := sha256.Sum256([]byte(q.Text))
	log := ReadLog{TenantID: c.TenantID, KeyID: c.KeyID, WorkareaID: where.ID, QuerySHA256: sum[:], At: s.Now().UTC()}
	for _, x := range append(res.Steering, res.Hits...) {
		log.Returned = append(log.Returned, x.Entry.ArtifactID)
		log.Simulations = append(log.Simulations, x.Entry.SimulationID)
	}
	leave()
	if err := s.Repo.LogRead(ctx, log); err != nil {
		return Result{}, fmt.Errorf("read log: %w", err)
	}
	return res, nil
}

// preparedQuery is what recall computes before its legs: the query's
// lexemes with the corpus statistics, and its embedding (nil when the
// vector leg is off or the query embeds to nothing).
type preparedQuery struct {
	terms  []domain.TermStat
	corpus domain.Corpus
	vector []float32
}

func (s *Service) prepareQuery(ctx context.Context, tenant string, q domain.Query) (preparedQuery, error) {
	terms, corpus, err := s.Repo.QueryTerms(ctx, tenant, q.Text)
	if err != nil {
		return preparedQuery{}, fmt.Errorf("query terms: %w", err)
	}
	pq := preparedQuery{terms: terms, corpus: corpus}
	if s.Fusion.Vector > 0 {
		if pq.vector, err = s.queryVector(ctx, q.Text, terms, corpus); err != nil {
			return preparedQuery{}, err
		}
	}
	return pq, nil
}

func (s *Service) recall(ctx context.Context, tenant string, q domain.Query, pq preparedQuery, steerFilter, hitFilter Filter) (Result, error) {
	var res Result
	fused, err := s.rank(ctx, tenant, q, pq, hitFilter, &res.Plan)
	if err != nil {
		return res, err
	}
	ids := make([]string, len(fused))
	for i, r := range fused {
		ids[i] = r.ID
	}
	// The steering rows come with the hits, one round trip for both.
	entries, steering, err := s.Repo.HitsAndSteering(ctx, tenant, ids, steerFilter, domain.MaxSteering)
	if err != nil {
		return res, fmt.Errorf("load hits and steering: %w", err)
	}
	for _, e := range steering {
		res.Steering = append(res.Steering, Shown{Entry: e})
	}
	byID := make(map[string]Entry, len(entries))
	for _, e := range entries {
		byID[e.ArtifactID] = e
	}
	for _, r := range fused {
		if e, ok := byID[r.ID]; ok {
			res.Hits = append(res.Hits, Shown{Entry: e, Score: r.Score})
		}
	}
	return res, nil
}

// rank runs both legs over what hitFilter reaches and fuses them; none
// when it reaches nothing the caller may read. plan is set to the vector
// leg's search.
func (s *Service) rank(ctx context.Context, tenant string, q domain.Query, pq preparedQuery, hitFilter Filter, plan *domain.Search) ([]domain.Ranked, error) {
	if len(hitFilter.Allow) == 0 {
		return nil, nil
	}
	terms, corpus := pq.terms, pq.corpus
	// Both legs search the rows the filter reaches; the maintained
	// per-workarea counts say how many, whatever the planner believes.
	reach, err := s.reachable(ctx, tenant, hitFilter)
	if err != nil {
		return nil, fmt.Errorf("count reachable rows: %w", err)
	}
	vectorLeg := s.Fusion.Vector > 0 && pq.vector != nil
	var ftIDs []string
	var feedback [][]float32
	if ftq, ok := domain.NewFullTextQuery(terms, corpus, reach); ok && (s.Fusion.FullText > 0 || s.Feedback.Docs > 0) {
		// The feedback's vectors come with the leg's rows, one round
		// trip for both.
		var want Vectors
		if vectorLeg {
			want = Vectors{N: s.Feedback.Docs, Model: s.Embedder.Model()}
		}
		if ftIDs, feedback, err = s.Repo.FullText(ctx, tenant, ftq, hitFilter, domain.LegDepth(q.K), want); err != nil {
			return nil, fmt.Errorf("full-text leg: %w", err)
		}
	}
	var vecIDs []string
	if vectorLeg {
		leg, err := s.vectorSearch(ctx, tenant, pq.vector, Leg{Query: q, Terms: terms, Corpus: corpus, Reach: reach, Filter: hitFilter, FullText: ftIDs}, feedback)
		if err != nil {
			return nil, err
		}
		vecIDs, *plan = leg.IDs, leg.Plan
	}
	return s.Fusion.Fuse(ftIDs, vecIDs, q.K), nil
}

// Leg is what the vector leg starts from: the query, its lexemes' and
// the corpus's statistics, the rows the filter reaches, and the full-text
// leg's ranking (nil for no feedback).
type Leg struct {
	Query    domain.Query
	Terms    []domain.TermStat
	Corpus   domain.Corpus
	Reach    int64
	Filter   Filter
	FullText []string
}

// VectorResult is the vector leg's ranking, the plan that produced it and
// the query vector it searched with.
type VectorResult struct {
	IDs    []string
	Plan   domain.Search
	Vector []float32
}

// VectorLeg runs the vector leg as recall does: the query embedded with
// its terms' rarity weights, moved towards the full-text leg's best
// entries (feedback), searched as domain.Plan says. A query that embeds to
// nothing searches nothing. Exported for the recall benchmark, which
// compares it with an exact scan.
func (s *Service) VectorLeg(ctx context.Context, tenant string, l Leg) (VectorResult, error) {
	vec, err := s.queryVector(ctx, l.Query.Text, l.Terms, l.Corpus)
	if err != nil || vec == nil {
		return VectorResult{}, err
	}
	var feedback [][]float32
	if top := l.FullText[:min(s.Feedback.Docs, len(l.FullText))]; len(top) > 0 {
		if feedback, err = s.Repo.Embeddings(ctx, tenant, s.Embedder.Model(), top); err != nil {
			return VectorResult{}, fmt.Errorf("feedback vectors: %w", err)
		}
	}
	return s.vectorSearch(ctx, tenant, vec, l, feedback)
}

// queryVector embeds the query with its terms' rarity weights; nil when it
// embeds to nothing. It may call a remote embedder: never inside a
// transaction.
func (s *Service) queryVector(ctx context.Context, text string, terms []domain.TermStat, corpus domain.Corpus) ([]float32, error) {
	weights := make(map[string]float32, len(terms))
	for _, t := range terms {
		weights[t.Term] = float32(domain.IDF(t.DF, corpus.Docs))
	}
	vec, err := s.Embedder.EmbedQuery(ctx, text, weights)
	if err != nil || !nonZero(vec) {
		return nil, err
	}
	return vec, nil
}

// vectorSearch is the vector leg's search with an embedded query: moved
// towards the full-text leg's best entries (feedback, their stored
// vectors), searched as domain.Plan says.
func (s *Service) vectorSearch(ctx context.Context, tenant string, vec []float32, l Leg, feedback [][]float32) (VectorResult, error) {
	var err error
	if len(feedback) > 0 {
		vec = s.Feedback.Expand(vec, feedback)
	}
	depth := domain.LegDepth(l.Query.K)
	res := VectorResult{Vector: vec, Plan: domain.Plan(l.Reach, max(l.Corpus.AllDocs, l.Corpus.Docs), depth)}
	if l.Reach > domain.ExactThreshold {
		if res.Plan, err = s.subtreePlan(ctx, tenant, res.Plan, l, depth); err != nil {
			return VectorResult{}, err
		}
	}
	if res.IDs, err = s.Repo.Vector(ctx, tenant, s.Embedder.Model(), s.Embedder.Dim(), vec, l.Filter, depth, res.Plan); err != nil {
		return VectorResult{}, fmt.Errorf("vector leg: %w", err)
	}
	// An overfetch expects depth rows to pass the filter; if the query's
	// neighbourhood lies mostly outside the scope, fewer than k do, and a
	// filtered search finds the rest.
	if res.Plan.Method == domain.Overfetch && int64(len(res.IDs)) < min(int64(l.Query.K), l.Reach) {
		res.Plan = domain.Search{Method: domain.Filtered}
		if res.IDs, err = s.Repo.Vector(ctx, tenant, s.Embedder.Model(), s.Embedder.Dim(), vec, l.Filter, depth, res.Plan); err != nil {
			return VectorResult{}, fmt.Errorf("vector leg: %w", err)
		}
	}
	return res, nil
}

// subtreePlan lets an HNSW index of a subtree holding the scope serve
// the vector leg when domain.SubtreePlan prefers it: the deepest such
// index the operator built (oml-server subtree-index), its rows from the
// maintained counts.
func (s *Service) subtreePlan(ctx context.Context, tenant string, whole domain.Search, l Leg, depth int) (domain.Search, error) {
	sub, rows, err := s.Repo.SubtreeIndex(ctx, tenant, s.Embedder.Model(), l.Filter.Scope)
	if err != nil || sub == "" {
		return whole, err
	}
	return domain.SubtreePlan(whole, l.Reach, sub, rows, depth), nil
}

// paths fills in the workarea paths of what recall returns.
func (s *Service) paths(ctx context.Context, res *Result) error {
	var ids []string
	for _, x := range append(res.Steering, res.Hits...) {
		ids = append(ids, x.Entry.WorkareaID)
	}
	if len(ids) == 0 {
		return nil
	}
	paths, err := s.Access.Paths(ctx, ids)
	if err != nil {
		return fmt.Errorf("workarea paths: %w", err)
	}
	for i := range res.Steering {
		res.Steering[i].WorkareaPath = paths[res.Steering[i].Entry.WorkareaID]
	}
	for i := range res.Hits {
		res.Hits[i].WorkareaPath = paths[res.Hits[i].Entry.WorkareaID]
	}
	return nil
}

func nonZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return true
		}
	}
	return false
}

// LogRead records one read another context served (ReadGraph).
func (s *Service) LogRead(ctx context.Context, r ReadLog) error {
	if r.Operation != ReadGraph {
		return fmt.Errorf("read log: operation %q is not another context's read", r.Operation)
	}
	return s.Repo.LogRead(ctx, r)
}

// The bounds of a read-log listing.
const (
	DefaultReadLogPage = 100
	MaxReadLogPage     = 500
)

// ReadLogQuery selects read-log rows to list: of a key, in a workarea (id
// or path), or both; a page of Limit below Cursor.
type ReadLogQuery struct {
	KeyID    string
	Workarea string
	Cursor   string
	Limit    int
}

// ReadLogPage is one page of the read log, newest first; NextCursor
// continues it ("" at the end).
type ReadLogPage struct {
	Rows       []ReadLog
	NextCursor string
}

// ListReadLog lists the read log for an admin: the reads scoped to a
// workarea it administers, or a key's reads (admin on universe).
func (s *Service) ListReadLog(ctx context.Context, q ReadLogQuery) (ReadLogPage, error) {
	c, err := auth.ContentCaller(ctx, "the read log")
	if err != nil {
		return ReadLogPage{}, err
	}
	switch {
	case q.KeyID == "" && q.Workarea == "":
		return ReadLogPage{}, errs.Invalid("name a key_id, a workarea or both")
	case q.Limit == 0:
		q.Limit = DefaultReadLogPage
	case q.Limit < 0 || q.Limit > MaxReadLogPage:
		return ReadLogPage{}, errs.New(errs.LimitCeiling, "a read-log listing is bounded: limit 1–500", "limit %d is outside 1–%d", q.Limit, MaxReadLogPage)
	}
	f := ReadLogFilter{KeyID: q.KeyID, Limit: q.Limit + 1}
	if q.Cursor != "" {
		n, err := strconv.ParseInt(q.Cursor, 10, 64)
		if err != nil || n <= 0 {
			return ReadLogPage{}, errs.Invalid("cursor: not one this listing gave (want a next_cursor)")
		}
		f.BeforeID = n
	}
	if q.Workarea != "" {
		w, err := s.Access.Workarea(ctx, q.Workarea)
		if err != nil {
			return ReadLogPage{}, err
		}
		if !w.Reader {
			return ReadLogPage{}, errs.New(errs.NotFound, "effective access (D7); unknown and out-of-scope are indistinguishable",
				"no readable workarea with that reference for this key")
		}
		if !w.Admin {
			return ReadLogPage{}, errs.New(errs.Denied, "the read log is an admin's: admin on the workarea (D7)",
				"this key is not an admin of workarea %s", w.ID)
		}
		f.WorkareaID = w.ID
	} else if err := s.Access.AdministersTenant(ctx); err != nil {
		return ReadLogPage{}, err
	}
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return ReadLogPage{}, err
	}
	rows, err := s.Repo.ReadLogList(ctx, c.TenantID, f)
	if err != nil {
		return ReadLogPage{}, fmt.Errorf("list the read log: %w", err)
	}
	for i := range rows {
		rows[i].Returned = fenceReturned(rows[i], fence)
	}
	page := ReadLogPage{Rows: rows}
	if len(rows) > q.Limit {
		page.Rows, page.NextCursor = rows[:q.Limit], strconv.FormatInt(rows[q.Limit-1].ID, 10)
	}
	return page, nil
}

// fenceReturned is a logged read's returned ids that fence admits: a
// simulation's rows are named only to its audience (D10).
func fenceReturned(r ReadLog, fence scope.Fence) []string {
	out := make([]string, 0, len(r.Returned))
	for i, id := range r.Returned {
		if i < len(r.Simulations) && !fence.Admits(r.Simulations[i]) {
			continue
		}
		out = append(out, id)
	}
	return out
}

// SweepReadLog deletes up to limit read-log rows older than cutoff.
func (s *Service) SweepReadLog(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.Repo.ReadLogPurge(ctx, cutoff, limit)
}
