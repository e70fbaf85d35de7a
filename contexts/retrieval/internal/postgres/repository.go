// Package postgres is the retrieval context's storage: the serving tier
// (entries with their tsvector and embedding), staged embeddings, corpus
// statistics, per-workarea counts and the read log.
package postgres

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/domain"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/expiring"
	"github.com/omlhub/oml/platform/pg"
)

// Repository implements app.Repository.
type Repository struct {
	db *pg.DB
	q  *dbsqlc.Queries
	// scopes remembers which models' scope indexes are valid.
	scopes struct {
		sync.Mutex
		seen map[string]scopeSeen
	}
	// subtrees remembers which subtree index served a scope (subtree.go).
	subtrees *expiring.Map[string, subtreeSeen]
	// logs writes the read log outside a unit of work (readlog.go).
	logs *readLogWriter
}

// scopeSeen is whether a scope index was valid when last looked at.
type scopeSeen struct {
	valid bool
	at    time.Time
}

var _ app.Repository = (*Repository)(nil)

// New returns a repository on db.
func New(db *pg.DB) *Repository {
	q := dbsqlc.New()
	return &Repository{db: db, q: q, subtrees: expiring.New[string, subtreeSeen](time.Minute, maxSubtreeSeen), logs: &readLogWriter{db: db.Pooled(), q: q}}
}

func (r *Repository) conn(ctx context.Context) dbsqlc.DBTX { return r.db.Conn(ctx) }

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Stage keeps a held claim's embedding. In a unit of work the row goes
// with its next statement (pg.DB.Later): an error then fails that one.
func (r *Repository) Stage(ctx context.Context, tenant, artifact string, vec []float32, model string) error {
	v := pgvector.NewHalfVector(vec)
	return r.q.StagedUpsert(ctx, r.db.Later(ctx, "retrieval: stage embedding"), dbsqlc.StagedUpsertParams{TenantID: tenant, ArtifactID: artifact, Embedding: v, EmbeddingModel: &model})
}

type attachmentRecord struct {
	SHA256    string `json:"sha256"`
	MediaType string `json:"media_type"`
	SizeBytes int64  `json:"size_bytes"`
}

// Index inserts a promoted claim with its staged embedding (or the one
// given) and updates lexeme frequencies, the corpus size and the
// workarea's count: two statements, the staged row taken with the entry's
// insert, then its statistics counted. It runs only in a unit of work:
// alone, the staged row's deletion and the statistics would commit
// apart. Both go with the unit of work's next statement (pg.DB.Later),
// so an error of theirs fails that one, or the commit.
func (r *Repository) Index(ctx context.Context, e app.Entry) error {
	if err := pg.InTxRequired(ctx); err != nil {
		return err
	}
	// Without an embedding given, the staged one (if any) is taken.
	var emb *pgvector.HalfVector
	var model *string
	if len(e.Embedding) > 0 {
		v := pgvector.NewHalfVector(e.Embedding)
		emb, model = &v, &e.Model
	}
	atts := make([]attachmentRecord, len(e.Attachments))
	for i, a := range e.Attachments {
		atts[i] = attachmentRecord(a)
	}
	aj, err := json.Marshal(atts)
	if err != nil {
		return err
	}
	var sim *string
	if e.SimulationID != "" {
		sim = &e.SimulationID
	}
	if err := r.q.EntryInsert(ctx, r.db.Later(ctx, "retrieval: insert entry"), dbsqlc.EntryInsertParams{
		TenantID: e.TenantID, ArtifactID: e.ArtifactID, WorkareaID: e.WorkareaID, WorkareaIDPath: e.WorkareaIDPath,
		Kind: e.Kind, ClaimKey: e.ClaimKey, Version: int32(e.Version), Text: e.Text, Embedding: emb, EmbeddingModel: model,
		PromotedAt: e.PromotedAt, SimulationID: sim, Attachments: aj,
	}); err != nil {
		return fmt.Errorf("insert entry: %w", err)
	}
	// The tenant's corpus row serialises promotions until commit, so it is
	// taken after the entry (and its HNSW insert, the costly part) is in,
	// in one statement with the lexeme rows and the workarea's count that
	// come after it, and in the pipeline of the unit of work's next
	// statement (the journal's, as a verdict commits): the lock is held
	// for fewer round trips (docs/BENCHMARKS.md, "Serve + verdict").
	if err := r.q.EntryCounted(ctx, r.db.Later(ctx, "retrieval: corpus statistics"), dbsqlc.EntryCountedParams{TenantID: e.TenantID, ArtifactID: e.ArtifactID, WorkareaID: e.WorkareaID, IDPath: e.WorkareaIDPath}); err != nil {
		return fmt.Errorf("corpus statistics: %w", err)
	}
	return nil
}

// Remove deletes an entry and any staged embedding, in a unit of work
// (its statements stand or fall together).
func (r *Repository) Remove(ctx context.Context, tenant, artifact string) error {
	if err := pg.InTxRequired(ctx); err != nil {
		return err
	}
	conn := r.conn(ctx)
	if err := r.q.StagedDelete(ctx, conn, dbsqlc.StagedDeleteParams{TenantID: tenant, ArtifactID: artifact}); err != nil {
		return err
	}
	// A held item has no entry (a rejection, an expiry): it leaves the
	// corpus row alone. An entry's removal locks the corpus row before
	// any lexeme row, as indexing does.
	exists, err := r.q.EntryExists(ctx, conn, dbsqlc.EntryExistsParams{TenantID: tenant, ArtifactID: artifact})
	if err != nil || !exists {
		return err
	}
	if err := r.q.CorpusLock(ctx, conn, tenant); err != nil {
		return fmt.Errorf("lock corpus: %w", err)
	}
	// Lexeme counts read the entry's tsvector, so they go before the row.
	if err := r.q.TermDFRemove(ctx, conn, dbsqlc.TermDFRemoveParams{TenantID: tenant, ArtifactID: artifact}); err != nil {
		return fmt.Errorf("lexeme frequencies: %w", err)
	}
	row, err := r.q.EntryDelete(ctx, conn, dbsqlc.EntryDeleteParams{TenantID: tenant, ArtifactID: artifact})
	if pg.IsNoRows(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete entry: %w", err)
	}
	if err := r.q.CorpusAdd(ctx, conn, dbsqlc.CorpusAddParams{TenantID: tenant, Delta: -1, LexemesDelta: -row.Lexemes}); err != nil {
		return fmt.Errorf("corpus statistics: %w", err)
	}
	return r.q.CountsAdd(ctx, conn, dbsqlc.CountsAddParams{TenantID: tenant, WorkareaID: row.WorkareaID, IDPath: row.WorkareaIDPath, Delta: -1})
}

// QueryTerms returns the query's lexemes with their frequencies, and the
// corpus statistics.
func (r *Repository) QueryTerms(ctx context.Context, tenant, query string) ([]domain.TermStat, domain.Corpus, error) {
	rows, err := r.q.QueryTerms(ctx, r.conn(ctx), dbsqlc.QueryTermsParams{TenantID: tenant, Query: query})
	if err != nil {
		return nil, domain.Corpus{}, err
	}
	var c domain.Corpus
	out := make([]domain.TermStat, len(rows))
	for i, row := range rows {
		out[i] = domain.TermStat{Term: row.Term, DF: row.Df}
		c = domain.Corpus{Docs: row.Docs, Lexemes: row.Lexemes, AllDocs: row.AllDocs}
	}
	return out, c, nil
}

// Reachable counts the rows a filter reaches, from per-workarea counts.
func (r *Repository) Reachable(ctx context.Context, tenant string, f app.Filter) (int64, error) {
	return r.q.SubtreeCount(ctx, r.conn(ctx), dbsqlc.SubtreeCountParams{TenantID: tenant, Scope: f.Scope, Allow: orEmpty(f.Allow), Deny: orEmpty(f.Deny)})
}

func entryFrom(tenant, id, workarea, kind, claimKey string, version int32, text string, at time.Time, attachments []byte, simulation *string) (app.Entry, error) {
	e := app.Entry{TenantID: tenant, ArtifactID: id, WorkareaID: workarea, Kind: kind, ClaimKey: claimKey, Version: int(version), Text: text, PromotedAt: at}
	if simulation != nil {
		e.SimulationID = *simulation
	}
	var atts []attachmentRecord
	if err := json.Unmarshal(attachments, &atts); err != nil {
		return e, fmt.Errorf("decode attachments of %s: %w", id, err)
	}
	for _, a := range atts {
		e.Attachments = append(e.Attachments, app.Attachment(a))
	}
	return e, nil
}

// HitsAndSteering loads a recall's hits by id and the steering rows the
// filter steer reaches, at most limit, in one statement.
func (r *Repository) HitsAndSteering(ctx context.Context, tenant string, ids []string, steer app.Filter, limit int) (hits, steering []app.Entry, err error) {
	rows, err := r.q.HitsAndSteering(ctx, r.conn(ctx), dbsqlc.HitsAndSteeringParams{
		TenantID: tenant, Ids: orEmpty(ids), Fence: steer.Fence.IDs(), Scope: steer.Scope, Allow: orEmpty(steer.Allow), Deny: orEmpty(steer.Deny), MaxRows: int32(limit),
	})
	if err != nil {
		return nil, nil, err
	}
	order := make(map[string]int64)
	for _, row := range rows {
		e, err := entryFrom(tenant, row.ArtifactID, row.WorkareaID, row.Kind, row.ClaimKey, row.Version, row.Text, row.PromotedAt, row.Attachments, row.SimulationID)
		if err != nil {
			return nil, nil, err
		}
		if row.Steering {
			steering = append(steering, e)
			order[e.ArtifactID] = row.Ord
		} else {
			hits = append(hits, e)
		}
	}
	// The statement numbers the steering rows; a UNION ALL promises no
	// order of its own.
	slices.SortFunc(steering, func(a, b app.Entry) int { return cmp.Compare(order[a.ArtifactID], order[b.ArtifactID]) })
	return hits, steering, nil
}

// oneShot runs a recall query as the unnamed statement, planned for its
// actual parameters every time (a cached generic plan once kept a 300 ms
// plan for a narrow scope). pgx caches only the statement's description,
// per connection, so the parameters and results travel in binary: the
// query vector as 768 bytes of halfvec rather than ~3 KB of decimal text
// formatted here and parsed by the server (0.1–0.2 ms a recall). The SQL
// the legs build takes a few dozen shapes (the full-text leg's lexeme
// count, the vector leg's method and dimension); a shape's first use on a
// connection costs one describe round trip.
var oneShot = pgx.QueryExecModeCacheDescribe

// A leg whose SQL fixes its plan's shape runs under a generic plan:
// prepared once per connection and planned once, where the unnamed
// statement is parsed and planned on every recall (0.3–0.7 ms of planning
// a leg, docs/BENCHMARKS.md). These are the exact scan of the scope index
// (tenant and workareas are its keys), the overfetch (an HNSW walk in an
// inner ORDER BY … LIMIT whose partial index predicate is inlined) and,
// for a tenant that holds most of the entries, the full-text leg lexemes
// first (domain.FullTextQuery.Generic: its tenant and scope tests are
// hidden from the planner, so the GIN index is the only way in). Their
// SQL takes its casts of the scope, allow and deny lists in scalar
// subqueries, computed once per execution (sqlc.yaml), as a generic plan
// would otherwise apply them to every row.
//
// rankedIn sends such a leg in one batch, one round trip, under the plan
// mode it names: it keeps plan_cache_mode as it finds it (in a placeholder
// setting), sets mode with the leg's other settings (set_config(…, true)
// lasts to the end of the transaction: a recall's statement's own, which
// ends with the batch, or the caller's unit of work), runs the query, and
// puts plan_cache_mode back, so that what follows in a unit of work — an
// unnamed statement among it — is planned as before. A generic leg runs
// under force_generic_plan (left to itself Postgres keeps planning
// afresh, as it prices a generic LIMIT $n at a tenth of the rows); a
// filtered search, whose walk settings must hold for its statement,
// under force_custom_plan, planned for its values as the unnamed
// statement is. The statement is prepared as the pool's default exec
// mode prepares it (pgx's cached statements unless the database URL says
// otherwise; with another mode the plan is as the mode says, only built
// each time). settings is a list of set_config(…, true) calls after the
// mode, their parameters settingArgs. Rows are (artifact id, score or
// distance), and a stored vector when a full-text leg asks for its best
// rows' (FullText).
//
// Outside a unit of work (a recall's legs) the batch is the transaction,
// so its settings end with it: the mode is neither kept nor put back,
// two statements of four.
func (r *Repository) rankedIn(ctx context.Context, mode planMode, settings string, settingArgs []any, sql string, args []any) ([]hit, error) {
	inTx := pg.InTxRequired(ctx) == nil
	b := &pgx.Batch{}
	settingStatements := 1
	if inTx {
		b.Queue(`SELECT set_config('oml.found_plan_cache_mode', current_setting('plan_cache_mode'), true)`)
		settingStatements++
	}
	b.Queue(`SELECT set_config('plan_cache_mode', '`+string(mode)+`', true)`+settings, settingArgs...)
	b.Queue(sql, args...)
	if inTx {
		b.Queue(`SELECT set_config('plan_cache_mode', current_setting('oml.found_plan_cache_mode'), true)`)
	}
	br := pg.CloseOnce(r.db.Conn(ctx).SendBatch(ctx, b))
	defer br.Close()
	for range settingStatements {
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	hits, err := scanHits(rows)
	if err != nil {
		return nil, err
	}
	if inTx {
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	return hits, br.Close()
}

// planMode is a plan_cache_mode a leg runs under (rankedIn).
type planMode string

const (
	genericPlan planMode = "force_generic_plan"
	customPlan  planMode = "force_custom_plan"
)

// rankedOnce runs a leg as the unnamed statement, planned for its values.
func (r *Repository) rankedOnce(ctx context.Context, sql string, args []any) ([]hit, error) {
	rows, err := r.db.Conn(ctx).Query(ctx, sql, append([]any{oneShot}, args...)...)
	if err != nil {
		return nil, err
	}
	return scanHits(rows)
}

// hit is a ranked row: an entry and its score (full text) or distance
// (vector).
type hit struct {
	id  string
	v   float64
	vec []float32 // a stored vector, when the leg's SQL returns one
}

func scanHits(rows pgx.Rows) ([]hit, error) {
	defer rows.Close()
	var hits []hit
	withVectors := len(rows.FieldDescriptions()) == 3
	for rows.Next() {
		var h hit
		dest := []any{&h.id, &h.v}
		if withVectors {
			dest = append(dest, &h.vec)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// BM25's k1 on ts_rank_cd's scale (see FullText) and its length
// normalisation b.
const (
	bm25K1 = 0.12
	bm25B  = 0.75
)

// FullText runs the full-text leg: entries holding any of the query's
// candidate lexemes, inside the filter, ranked by BM25
//
//	Σ idf(t) · tf(t) / (tf(t) + k1 · (1 − b + b · len / avglen))
//
// over the query's scoring lexemes t, with b = 0.75 and len the entry's
// length in distinct lexemes. tf(t) is ts_rank_cd(tsv, t, 0), which for
// a one-lexeme query sums its occurrences' weights (found by a binary
// search in the tsvector): 0.1 each (weight D), 0.4 in the entry's lead
// (weight B, retrieval.entry_tsv), so k1 = 0.12 on that scale is BM25's
// 1.2 and a lead occurrence counts four; this costs a tenth of unnesting
// every candidate's tsvector (docs/BENCHMARKS.md). A candidate holds
// few of the query's lexemes, so each term first asks whether the entry
// holds its lexeme at all (tsv @@ t, under half of ts_rank_cd's cost)
// and ranks only when it does: the same scores for less work per row.
// The length norm k1 · (1 − b + b · len / avglen) is computed as
// k1 · (1 − b) + (k1 · b / avglen) · len, both factors float8 (the second
// a parameter): written with SQL literals (0.75 * length(tsv)) it was
// numeric arithmetic, run for every lexeme an entry holds: the float8
// form took 26–30 % off the leg at 100k and 1M entries (docs/BENCHMARKS.md).
// The SQL is built here because the sum has one term per lexeme; every
// value is a parameter.
//
// With want.N > 0 the statement also brings the stored vectors of its
// best want.N rows under want.Model, looked up by key after the LIMIT, so
// that the vector leg's feedback costs no round trip of its own.
func (r *Repository) FullText(ctx context.Context, tenant string, q domain.FullTextQuery, f app.Filter, limit int, want app.Vectors) ([]string, [][]float32, error) {
	perLexeme := bm25K1 * bm25B / max(q.AvgLen, 1)
	args := []any{tenant, q.TSQuery, f.Scope, orEmpty(f.Allow), orEmpty(f.Deny), limit, perLexeme, f.Fence.IDs()}
	k := "(" + strconv.FormatFloat(bm25K1*(1-bm25B), 'g', -1, 64) + "::float8 + $7::float8 * length(tsv))"
	var score strings.Builder
	for i, lexeme := range q.Lexemes {
		if i > 0 {
			score.WriteString(" + ")
		}
		// idf · tf / (tf + k) written as idf / (1 + k / tf), so that each
		// ts_rank_cd, the costly part, runs at most once per row (an
		// expression has no common subexpressions: a value used twice is
		// computed twice), and only for a lexeme the entry holds; one it
		// lacks (tf 0) adds 0.
		fmt.Fprintf(&score, "CASE WHEN tsv @@ $%[2]d::tsquery THEN coalesce($%[1]d::float8 / (1 + %[3]s / nullif(ts_rank_cd('{0.1, 0.2, 0.4, 1.0}', tsv, $%[2]d::tsquery, 0), 0)), 0) ELSE 0 END", len(args)+1, len(args)+2, k)
		args = append(args, q.IDF[i], domain.TSQuery([]string{lexeme}))
	}
	// Scope first, the subtree's rows come from the path index; otherwise
	// IS TRUE hides the same test from the planner so that it
	// filters the GIN index's rows instead of intersecting them with a
	// scan of the whole subtree (the allow list alone keeps the scope).
	// The scope-first SQL needs the planner to see the scope's value, so
	// it runs as the unnamed statement; lexemes first, it may run under a
	// generic plan (q.Generic), with the tenant test hidden too.
	tenantIs := "tenant_id = $1"
	if q.Generic {
		tenantIs = "(tenant_id = $1) IS TRUE"
	}
	scope, allow, deny := scopeParams(q.Generic)
	inScope := "workarea_id_path <@ " + scope
	if !q.ScopeFirst {
		inScope = "(" + inScope + ") IS TRUE"
	}
	// In the index (q.ScopeInIndex), the subtrees that both the scope and
	// an allowed subtree hold are keys of the GIN scan too: an entry is
	// indexed under its path's prefixes (migration 0043), written as
	// ltree writes them. The path tests stay, hidden, so the rows are
	// exactly those of the other forms.
	if q.ScopeInIndex {
		subtrees := "$" + strconv.Itoa(len(args)+1) + "::text[]::ltree[]::text[]"
		if q.Generic {
			subtrees = "(SELECT " + subtrees + ")"
		}
		inScope = "retrieval.scope_prefixes(workarea_id_path) && " + subtrees + "\n  AND " + inScope
		args = append(args, orEmpty(domain.ScopeSubtrees(f.Scope, f.Allow)))
	}
	sql := `SELECT artifact_id, ` + score.String() + ` AS score
FROM retrieval.entries
WHERE ` + tenantIs + ` AND kind <> 'steering' AND (simulation_id IS NULL OR simulation_id = ANY($8::text[]))
  AND tsv @@ $2::tsquery
  AND ` + inScope + `
  AND ` + allow + ` @> workarea_id_path
  AND NOT (` + deny + ` @> workarea_id_path)
ORDER BY score DESC, artifact_id
LIMIT $6`
	if want.N > 0 {
		// The ranked rows are numbered in their order (already sorted, so
		// no second sort); the CASE runs its lookup only for the first
		// want.N.
		sql = fmt.Sprintf(`SELECT ranked.artifact_id, ranked.score,
    CASE WHEN ranked.n <= $%[1]d THEN (SELECT CAST(v.embedding::vector AS real[]) FROM retrieval.entries v
        WHERE v.tenant_id = $1 AND v.artifact_id = ranked.artifact_id AND v.embedding_model = $%[2]d AND v.embedding IS NOT NULL) END
FROM (SELECT artifact_id, score, row_number() OVER (ORDER BY score DESC, artifact_id) AS n FROM (`+sql+`) AS top) AS ranked
ORDER BY ranked.n`, len(args)+1, len(args)+2)
		args = append(args, want.N, want.Model)
	}
	var hits []hit
	var err error
	if q.Generic {
		hits, err = r.rankedIn(ctx, genericPlan, "", nil, sql, args)
	} else {
		hits, err = r.rankedOnce(ctx, sql, args)
	}
	if err != nil {
		return nil, nil, err
	}
	out := make([]string, len(hits))
	var vectors [][]float32
	for i, h := range hits {
		out[i] = h.id
		if h.vec != nil {
			vectors = append(vectors, h.vec)
		}
	}
	return out, vectors, nil
}

// Vector runs the vector leg as the plan says. Its SQL is built here
// rather than by sqlc because the embedding's dimension is part of the
// expression the HNSW index is built on (embedding::halfvec(N)), and a
// type modifier cannot be a parameter. Exact search orders by an
// expression the HNSW index does not match, so Postgres scans the
// scope's rows: in the model's scope index (EnsureVectorIndex, migration
// 0040) when it has a valid one, else through the path index. An
// overfetch walks the index once for the plan's candidates (the
// candidate list as wide) in a subquery whose LIMIT keeps the filter
// outside it; a filtered search lets the index walk with iterative scans
// until enough rows pass the filter. The model, the only inlined string,
// matches the partial indexes' predicates.
func (r *Repository) Vector(ctx context.Context, tenant, model string, dim int, vec []float32, f app.Filter, limit int, s domain.Search) ([]string, error) {
	expr := fmt.Sprintf("(embedding::halfvec(%d) <=> $2)", dim)
	modelIs := "embedding_model = '" + strings.ReplaceAll(model, "'", "''") + "'"
	const fenced = `tenant_id = $1 AND kind <> 'steering' AND (simulation_id IS NULL OR simulation_id = ANY($7::text[]))`
	filter := fenced + scopeTest("workarea_id_path", false)
	// A walk's settings are set_config calls in the leg's batch
	// (walkSettings, rankedIn), as a recall's statements run in no unit
	// of work (SET LOCAL would not last to the query); mode is the plan
	// the batch forces, none for the unnamed statement (rankedOnce).
	var walkSettings, sql string
	var walkArgs []any
	var mode planMode
	switch s.Method {
	case domain.Exact:
		scoped, err := r.scopeIndexed(ctx, model, dim)
		if err != nil {
			return nil, err
		}
		where := filter
		if scoped {
			// The scope's workareas, as the maintained counts list them
			// under the same filter (a workarea's path never changes, and
			// its entries carry it), select the rows: an index-only scan
			// of the scope index, workarea by workarea, instead of a heap
			// page a row, or the table when the planner misjudges a scope.
			// A workarea without a count row is left out (fail closed).
			// The shape is fixed (no path test left for the planner to
			// weigh), so the leg runs under a generic plan (rankedIn).
			where = fenced + `
  AND workarea_id = ANY (ARRAY (SELECT c.workarea_id FROM retrieval.workarea_counts c
      WHERE c.tenant_id = $1 AND c.n > 0` + scopeTest("c.id_path", true) + `))`
			mode = genericPlan
		}
		// The column itself, not the HNSW index's expression: no index
		// walk matches the ORDER BY, and no per-row cast to the model's
		// dimension is made (the model's rows all have it; 1 ms of an
		// 11 ms scan of 10,000 rows, docs/BENCHMARKS.md).
		sql = `SELECT artifact_id, (embedding <=> $2) AS distance FROM retrieval.entries
WHERE ` + modelIs + ` AND ` + where + `
ORDER BY (embedding <=> $2) LIMIT $6`
	case domain.Overfetch:
		// The index walk is the only plan for the inner ORDER BY … LIMIT
		// (the partial index's predicate is inlined): a generic plan, with
		// the walk's settings in the same round trip.
		mode = genericPlan
		walkSettings = `, set_config('hnsw.iterative_scan', 'off', true), set_config('hnsw.ef_search', $1, true)`
		walkArgs = []any{strconv.Itoa(s.Candidates)}
		// In a subtree's own index (subtree.go) the walk's WHERE is that
		// index's predicate, literally, so that Postgres proves it applies.
		walk := modelIs
		if s.Subtree != "" {
			if !isIDPath(s.Subtree) {
				return nil, fmt.Errorf("subtree %q is not an id path", s.Subtree)
			}
			walk = subtreePredicate(tenant, model, s.Subtree)
		}
		sql = fmt.Sprintf(`SELECT artifact_id, distance FROM (
    SELECT artifact_id, tenant_id, kind, simulation_id, workarea_id_path, %[1]s AS distance
    FROM retrieval.entries WHERE %[2]s ORDER BY %[1]s LIMIT $8) AS nearest
WHERE `, expr, walk) + fenced + scopeTest("workarea_id_path", true) + `
ORDER BY distance LIMIT $6`
	case domain.Filtered:
		// Planned for its values, with the iterative walk's settings in
		// its batch.
		mode = customPlan
		walkSettings = `, set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', '200', true)`
		sql = `SELECT artifact_id, ` + expr + ` AS distance FROM retrieval.entries
WHERE ` + modelIs + ` AND ` + filter + `
ORDER BY ` + expr + ` LIMIT $6`
	default:
		return nil, fmt.Errorf("unknown vector search %d", s.Method)
	}
	args := []any{tenant, pgvector.NewHalfVector(vec), f.Scope, orEmpty(f.Allow), orEmpty(f.Deny), limit, f.Fence.IDs()}
	if s.Method == domain.Overfetch {
		args = append(args, s.Candidates)
	}
	var hits []hit
	var err error
	if mode != "" {
		hits, err = r.rankedIn(ctx, mode, walkSettings, walkArgs, sql, args)
	} else {
		hits, err = r.rankedOnce(ctx, sql, args)
	}
	if err != nil {
		return nil, err
	}
	// Iterative scans in relaxed order may return near-ties out of order.
	slices.SortStableFunc(hits, func(a, b hit) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.id
	}
	return out, nil
}

// scopeTest is the vector leg's scope test of an id path column: under the
// scope ($3), under an allowed subtree ($4), under no denied one ($5).
func scopeTest(column string, once bool) string {
	scope, allow, deny := scopeParams(once)
	return `
  AND ` + column + ` <@ ` + scope + `
  AND ` + allow + ` @> ` + column + `
  AND NOT (` + deny + ` @> ` + column + `)`
}

// scopeParams are the legs' scope ($3), allow ($4) and deny ($5)
// parameters as ltree values. once computes their casts once per
// execution, as scalar subqueries, for a generic plan (sqlc.yaml); without
// it they are folded into constants when the statement is planned for its
// values.
func scopeParams(once bool) (scope, allow, deny string) {
	scope, allow, deny = "$3::text::ltree", "$4::text[]::ltree[]", "$5::text[]::ltree[]"
	if once {
		scope, allow, deny = "(SELECT "+scope+")", "(SELECT "+allow+")", "(SELECT "+deny+")"
	}
	return scope, allow, deny
}

// Embeddings returns the stored vectors of entries under one model.
func (r *Repository) Embeddings(ctx context.Context, tenant, model string, ids []string) ([][]float32, error) {
	return r.q.EntryEmbeddings(ctx, r.conn(ctx), dbsqlc.EntryEmbeddingsParams{TenantID: tenant, Ids: ids, Model: &model})
}

// LogRead records one read: in the caller's unit of work if ctx carries
// one, else committed with the rows of concurrent reads (readLogWriter)
// before it returns.
func (r *Repository) LogRead(ctx context.Context, l app.ReadLog) error {
	row := dbsqlc.ReadLogInsertParams{
		TenantID: l.TenantID, KeyID: l.KeyID, WorkareaID: l.WorkareaID, QuerySha256: l.QuerySHA256, Returned: orEmpty(l.Returned), At: l.At,
		Operation: cmp.Or(l.Operation, app.ReadRecall), Simulations: orEmpty(l.Simulations),
	}
	if pg.InTxRequired(ctx) != nil {
		return r.logs.write(ctx, row)
	}
	return insertReadLog(ctx, r.q, r.conn(ctx), []dbsqlc.ReadLogInsertParams{row}, make([]error, 1))
}

// Tenants lists the tenants that have a serving tier.
func (r *Repository) Tenants(ctx context.Context) ([]string, error) {
	return r.q.CorpusTenants(ctx, r.conn(ctx))
}

// SetLanguage sets a tenant's full-text language; an unknown text search
// configuration is a validation error.
func (r *Repository) SetLanguage(ctx context.Context, tenant, language string) error {
	err := r.q.TenantLanguageSet(ctx, r.conn(ctx), dbsqlc.TenantLanguageSetParams{TenantID: tenant, Language: language})
	if pg.IsCode(err, "42704") { // undefined_object
		return errs.Invalid("full-text language %q is not a text search configuration of this database (see \\dF in psql)", language)
	}
	return err
}

// Language returns a tenant's full-text language.
func (r *Repository) Language(ctx context.Context, tenant string) (string, error) {
	return r.q.TenantLanguage(ctx, r.conn(ctx), tenant)
}

// Page returns up to limit of a tenant's entries after an id, in id order.
func (r *Repository) Page(ctx context.Context, tenant, after string, limit int) ([]app.Stored, error) {
	rows, err := r.q.EntriesAfter(ctx, r.conn(ctx), dbsqlc.EntriesAfterParams{TenantID: tenant, After: after, MaxRows: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]app.Stored, len(rows))
	for i, row := range rows {
		out[i] = app.Stored{ArtifactID: row.ArtifactID, Text: row.Text, Model: row.EmbeddingModel, TSVCurrent: row.TsvCurrent}
	}
	return out, nil
}

// SetEmbedding replaces an entry's embedding; a vanished entry is not an
// error.
func (r *Repository) SetEmbedding(ctx context.Context, tenant, artifact string, vec []float32, model string) error {
	v := pgvector.NewHalfVector(vec)
	return r.q.EntrySetEmbedding(ctx, r.conn(ctx), dbsqlc.EntrySetEmbeddingParams{TenantID: tenant, ArtifactID: artifact, Embedding: &v, EmbeddingModel: &model})
}

// RebuildFullText re-parses an entry in the tenant's language and moves
// the lexeme frequencies and the corpus length with it.
func (r *Repository) RebuildFullText(ctx context.Context, tenant, artifact string) error {
	conn := r.conn(ctx)
	if err := r.q.CorpusLock(ctx, conn, tenant); err != nil {
		return fmt.Errorf("lock corpus: %w", err)
	}
	if err := r.q.TermDFRemove(ctx, conn, dbsqlc.TermDFRemoveParams{TenantID: tenant, ArtifactID: artifact}); err != nil {
		return fmt.Errorf("lexeme frequencies: %w", err)
	}
	delta, err := r.q.EntryRebuildTSV(ctx, conn, dbsqlc.EntryRebuildTSVParams{TenantID: tenant, ArtifactID: artifact})
	if pg.IsNoRows(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rebuild tsvector: %w", err)
	}
	if err := r.q.TermDFAdd(ctx, conn, dbsqlc.TermDFAddParams{TenantID: tenant, ArtifactID: artifact}); err != nil {
		return fmt.Errorf("lexeme frequencies: %w", err)
	}
	return r.q.CorpusAdd(ctx, conn, dbsqlc.CorpusAddParams{TenantID: tenant, Delta: 0, LexemesDelta: delta})
}

// EnsureVectorIndex builds, if they are missing, the model's partial
// indexes the vector leg uses: the HNSW index (cosine over
// halfvec(dim)), with one maintenance worker (pgvector 0.8.0's parallel
// build bug), and the scope index exact scans read (when the model's
// vectors fit a B-tree entry: dim ≤ MaxScopeIndexDim). Both are built
// without blocking writes (CREATE INDEX CONCURRENTLY, so outside any
// transaction). An index a failed concurrent build left invalid is
// dropped and built again. It reports whether it built one.
func (r *Repository) EnsureVectorIndex(ctx context.Context, model string, dim int) (bool, error) {
	quoted := strings.ReplaceAll(model, "'", "''")
	type index struct {
		name   string
		serial bool // one maintenance worker
		ddl    string
	}
	hnsw := VectorIndexName(model, dim)
	todo := []index{{hnsw, true, fmt.Sprintf(`CREATE INDEX CONCURRENTLY IF NOT EXISTS %s ON retrieval.entries
    USING hnsw ((embedding::halfvec(%d)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 200)
    WHERE embedding_model = '%s'`, hnsw, dim, quoted)}}
	if dim <= MaxScopeIndexDim {
		scope := ScopeIndexName(model, dim)
		todo = append(todo, index{scope, false, fmt.Sprintf(`CREATE INDEX CONCURRENTLY IF NOT EXISTS %s ON retrieval.entries (tenant_id, workarea_id)
    INCLUDE (artifact_id, simulation_id, embedding)
    WHERE embedding_model = '%s' AND kind <> 'steering'`, scope, quoted)})
	}
	conn, err := r.db.Pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Release()
	built := false
	for _, ix := range todo {
		b, err := ensureIndex(ctx, conn.Conn(), ix.name, ix.serial, ix.ddl)
		if err != nil {
			return built, err
		}
		built = built || b
	}
	return built, nil
}

// ensureIndex builds an index with ddl (a CREATE INDEX CONCURRENTLY IF NOT
// EXISTS) unless a valid one of that name exists; one a failed concurrent
// build left invalid is dropped and built again. It reports whether it
// built one.
func ensureIndex(ctx context.Context, conn *pgx.Conn, name string, serial bool, ddl string) (bool, error) {
	var exists, valid, building bool
	err := conn.QueryRow(ctx, `SELECT to_regclass('retrieval.' || $1) IS NOT NULL,
    coalesce((SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('retrieval.' || $1)), false),
    EXISTS (SELECT 1 FROM pg_stat_progress_create_index WHERE index_relid = to_regclass('retrieval.' || $1))`, name).Scan(&exists, &valid, &building)
	if err != nil {
		return false, err
	}
	if exists && valid {
		return false, nil
	}
	// Invalid while another session builds it (a second run at the same
	// time): not ours to drop.
	if building {
		return false, fmt.Errorf("%s is being built by another session; run again when it is done", name)
	}
	if exists {
		if _, err := conn.Exec(ctx, "DROP INDEX CONCURRENTLY retrieval."+name); err != nil {
			return false, fmt.Errorf("drop invalid %s: %w", name, err)
		}
	}
	if err := buildIndex(ctx, conn, serial, ddl); err != nil {
		return false, fmt.Errorf("build %s: %w", name, err)
	}
	return true, nil
}

// buildIndex runs one CREATE INDEX CONCURRENTLY, serial with one
// maintenance worker (the setting reset afterwards; a connection whose
// reset fails is closed, so the pool drops it rather than lend it out
// with the setting).
func buildIndex(ctx context.Context, conn *pgx.Conn, serial bool, ddl string) error {
	if serial {
		if _, err := conn.Exec(ctx, "SET max_parallel_maintenance_workers = 0"); err != nil {
			return err
		}
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if _, err := conn.Exec(rctx, "RESET max_parallel_maintenance_workers"); err != nil {
				_ = conn.Close(rctx)
			}
		}()
	}
	_, err := conn.Exec(ctx, ddl)
	return err
}

// MaxScopeIndexDim is the widest embedding a scope index holds. A B-tree
// entry is at most 2,704 bytes; a halfvec takes 8 + 2·dim, and the rest
// of the entry (tenant, workarea, artifact and simulation ids, server-made
// and bounded, with headers) well under 400, whatever the workarea's
// depth, since no path is stored. A wider model's exact scans read the
// table through the path index.
const MaxScopeIndexDim = 1024

// scopeIndexed says whether the model has a valid scope index, which the
// exact scan's SQL relies on (without one it would read all of the
// tenant's rows). A yes is kept; a no is asked again after a minute, so
// an index reindex builds is used soon after.
func (r *Repository) scopeIndexed(ctx context.Context, model string, dim int) (bool, error) {
	name := ScopeIndexName(model, dim)
	r.scopes.Lock()
	seen, known := r.scopes.seen[name]
	r.scopes.Unlock()
	if known && (seen.valid || time.Since(seen.at) < time.Minute) {
		return seen.valid, nil
	}
	err := r.conn(ctx).QueryRow(ctx, `SELECT coalesce((SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('retrieval.' || $1)), false)`, name).Scan(&seen.valid)
	if err != nil {
		return false, fmt.Errorf("scope index: %w", err)
	}
	seen.at = time.Now()
	r.scopes.Lock()
	defer r.scopes.Unlock()
	if r.scopes.seen == nil {
		r.scopes.seen = map[string]scopeSeen{}
	}
	r.scopes.seen[name] = seen
	return seen.valid, nil
}

// VectorIndexName names a model's HNSW index: the built-in embedder's
// keeps the name its migration gave it; others get a readable prefix and
// a digest of the model and dimension.
func VectorIndexName(model string, dim int) string { return indexName("hnsw", model, dim) }

// ScopeIndexName names a model's scope index, as VectorIndexName does.
func ScopeIndexName(model string, dim int) string { return indexName("scope", model, dim) }

func indexName(kind, model string, dim int) string {
	if model == fmt.Sprintf("oml-builtin-v2-%d", dim) && dim == 384 {
		return "entries_" + kind + "_builtin_384"
	}
	var b strings.Builder
	for _, c := range strings.ToLower(model) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		}
		if b.Len() == 24 {
			break
		}
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", model, dim)))
	return fmt.Sprintf("entries_%s_%s_%d_%x", kind, b.String(), dim, sum[:4])
}

// ReadLogList lists read-log rows by f, newest first.
func (r *Repository) ReadLogList(ctx context.Context, tenant string, f app.ReadLogFilter) ([]app.ReadLog, error) {
	rows, err := r.q.ReadLogList(ctx, r.conn(ctx), dbsqlc.ReadLogListParams{
		TenantID: tenant, KeyID: f.KeyID, WorkareaID: f.WorkareaID, BeforeID: f.BeforeID, MaxRows: int32(f.Limit),
	})
	if err != nil {
		return nil, err
	}
	out := make([]app.ReadLog, len(rows))
	for i, row := range rows {
		out[i] = app.ReadLog{ID: row.ID, Operation: row.Operation, TenantID: tenant, KeyID: row.KeyID, WorkareaID: row.WorkareaID,
			QuerySHA256: row.QuerySha256, Returned: row.Returned, Simulations: row.Simulations, At: row.At}
	}
	return out, nil
}

// ReadLogPurge deletes read-log rows older than cutoff.
func (r *Repository) ReadLogPurge(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return r.q.ReadLogPurge(ctx, r.conn(ctx), dbsqlc.ReadLogPurgeParams{Cutoff: cutoff, MaxRows: int32(limit)})
}
