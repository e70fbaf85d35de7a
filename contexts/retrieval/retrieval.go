// Package retrieval is the retrieval bounded context: the serving tier of
// promoted claims (full-text vector and embedding per row), hybrid recall
// with steering first (D12), the read log, the embedders and reindexing.
package retrieval

import (
	"context"
	"fmt"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/domain"
	"github.com/omlhub/oml/contexts/retrieval/internal/embed"
	"github.com/omlhub/oml/contexts/retrieval/internal/httpapi"
	"github.com/omlhub/oml/contexts/retrieval/internal/mcptools"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres"
	"github.com/omlhub/oml/contexts/retrieval/internal/wire"
	"github.com/omlhub/oml/platform/gate"
	"github.com/omlhub/oml/platform/metrics"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/transport"
)

// The ports other contexts fill and the types they exchange.
type (
	// Access is the access context as retrieval needs it.
	Access = app.Access
	// Workarea is a workarea with the caller's read access there.
	Workarea = app.Workarea
	// Subtrees are where the caller holds a scope.
	Subtrees = app.Subtrees
	// Entry is a promoted claim as the serving tier stores it.
	Entry = app.Entry
	// Attachment is an entry's attachment digest.
	Attachment = app.Attachment
	// Prepared is an embedding computed ahead of its transaction.
	Prepared = app.Prepared
	// ReindexOptions select what a reindex covers.
	ReindexOptions = app.ReindexOptions
	// ReindexReport is what a reindex did.
	ReindexReport = app.ReindexReport
	// TenantReindex is one tenant's part of a reindex.
	TenantReindex = app.TenantReindex
	// SubtreeIndex is an HNSW index of one tenant's entries under one
	// subtree.
	SubtreeIndex = app.SubtreeIndex
	// DroppedSubtreeIndex is what a drop of one did.
	DroppedSubtreeIndex = app.DroppedSubtreeIndex
	// ListedSubtreeIndex is a subtree index as the catalog shows it.
	ListedSubtreeIndex = app.ListedSubtreeIndex
	// ReadLog is one read as the read log records it.
	ReadLog = app.ReadLog
	// Sessions is the sessions context as search needs it.
	Sessions = app.Sessions
	// SearchRow is a row another context makes searchable.
	SearchRow = app.SearchRow
)

// The search corpora other contexts push rows into.
const (
	CorpusEvent = app.CorpusEvent
	CorpusBrain = app.CorpusBrain
)

// The read operations the read log records.
const (
	ReadRecall = app.ReadRecall
	ReadGraph  = app.ReadGraph
)

// EmbedderConfig selects the embedder: the built-in one unless URL is set,
// then an OpenAI-compatible /v1/embeddings endpoint.
type EmbedderConfig struct {
	URL    string
	Model  string
	Dim    int
	APIKey string
}

// Deps are what the context needs from the process.
type Deps struct {
	DB       *pg.DB
	Access   Access
	Sessions Sessions
	Embedder EmbedderConfig
	Now      func() time.Time
	// RecallConcurrency bounds the recalls that run at once (0: no bound;
	// oml-server passes OML_RECALL_CONCURRENCY).
	RecallConcurrency int
}

// Module is the retrieval context.
type Module struct {
	svc  *app.Service
	http *httpapi.Handlers
}

// NewEmbedder builds the configured embedder.
func NewEmbedder(c EmbedderConfig) (app.Embedder, error) {
	if c.URL == "" {
		return adapter{embed.NewBuiltin(c.Dim)}, nil
	}
	e, err := embed.NewOpenAI(embed.OpenAIConfig{URL: c.URL, Model: c.Model, Dim: c.Dim, APIKey: c.APIKey})
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	return adapter{e}, nil
}

// New assembles the context.
func New(d Deps) (*Module, error) {
	e, err := NewEmbedder(d.Embedder)
	if err != nil {
		return nil, err
	}
	repo := postgres.New(d.DB)
	svc := app.New(app.Deps{Repo: repo, SearchRepo: repo, Sessions: d.Sessions, Access: d.Access, Embedder: e, Tx: d.DB, Now: d.Now,
		Fusion: domain.DefaultFusion, Feedback: domain.DefaultFeedback, Gate: recallGate(d.RecallConcurrency)})
	return &Module{svc: svc, http: httpapi.New(svc)}, nil
}

// Routes registers the HTTP routes (under /v1).
func (m *Module) Routes(r chi.Router) { m.http.Routes(r) }

// Tools registers the MCP tools.
func (m *Module) Tools(t *transport.Tools) {
	mcptools.Register(t, m.svc)
	mcptools.RegisterSearch(t, m.svc)
}

// IndexSearchRow makes a row searchable, in the caller's unit of work.
func (m *Module) IndexSearchRow(ctx context.Context, r SearchRow) error {
	return m.svc.IndexSearchRow(ctx, r)
}

// DropSearchRow removes a searchable row, in the caller's unit of work.
func (m *Module) DropSearchRow(ctx context.Context, tenant, corpus, id string) error {
	return m.svc.DropSearchRow(ctx, tenant, corpus, id)
}

// DropSearchSession removes a session's brain rows (a prune).
func (m *Module) DropSearchSession(ctx context.Context, tenant, session string) error {
	return m.svc.DropSearchSession(ctx, tenant, session)
}

// CopySearchSession copies a session's brain rows to a fork.
func (m *Module) CopySearchSession(ctx context.Context, tenant, from, to string) error {
	return m.svc.CopySearchSession(ctx, tenant, from, to)
}

// Prepare embeds a submission's text outside any transaction.
func (m *Module) Prepare(ctx context.Context, text string) (Prepared, error) {
	return m.svc.Prepare(ctx, text)
}

// Stage keeps a held claim's embedding, in the caller's unit of work.
func (m *Module) Stage(ctx context.Context, tenant, artifact string, p Prepared) error {
	return m.svc.Stage(ctx, tenant, artifact, p)
}

// Promoted indexes a promoted claim in the caller's unit of work.
func (m *Module) Promoted(ctx context.Context, e Entry) error { return m.svc.Promoted(ctx, e) }

// Withdrawn removes a claim from the serving tier in the caller's unit of
// work.
func (m *Module) Withdrawn(ctx context.Context, tenant, artifact string) error {
	return m.svc.Withdrawn(ctx, tenant, artifact)
}

// adapter fits an embed.Embedder to the app's port.
type adapter struct{ e embed.Embedder }

func (a adapter) Model() string { return a.e.Model() }
func (a adapter) Dim() int      { return a.e.Dim() }

func (a adapter) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return a.embed(ctx, embed.Document, texts, nil)
}

func (a adapter) EmbedQuery(ctx context.Context, text string, weights map[string]float32) ([]float32, error) {
	v, err := a.embed(ctx, embed.Query, []string{text}, weights)
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// embed calls the embedder, counted and timed for /metrics.
func (a adapter) embed(ctx context.Context, role embed.Role, texts []string, weights map[string]float32) ([][]float32, error) {
	start := time.Now()
	v, err := a.e.Embed(ctx, role, texts, weights)
	metrics.Since(metrics.EmbedderDuration, start)
	if err != nil {
		metrics.EmbedderCalls.WithLabelValues("error").Inc()
		return nil, err
	}
	metrics.EmbedderCalls.WithLabelValues("ok").Inc()
	return v, nil
}

// Reindex re-embeds entries whose model is not the configured one and
// re-parses tsvectors not in their tenant's language, while recall keeps
// serving (oml-server reindex).
func (m *Module) Reindex(ctx context.Context, o ReindexOptions) (ReindexReport, error) {
	return m.svc.Reindex(ctx, o)
}

// BuildSubtreeIndex builds an HNSW index of a tenant's entries under the
// subtree at a workarea's id path, which recall in scopes inside it walks
// instead of the shared index (oml-server subtree-index).
func (m *Module) BuildSubtreeIndex(ctx context.Context, tenant, idPath string) (SubtreeIndex, error) {
	return m.svc.BuildSubtreeIndex(ctx, tenant, idPath)
}

// DropSubtreeIndex drops the subtree index at a workarea's id path.
func (m *Module) DropSubtreeIndex(ctx context.Context, tenant, idPath string) (DroppedSubtreeIndex, error) {
	return m.svc.DropSubtreeIndex(ctx, tenant, idPath)
}

// ListSubtreeIndexes lists a tenant's subtree indexes ("" for every
// tenant's), of any model.
func (m *Module) ListSubtreeIndexes(ctx context.Context, tenant string) ([]ListedSubtreeIndex, error) {
	return m.svc.ListSubtreeIndexes(ctx, tenant)
}

// LogRead records another context's read (the graph) in the read log.
func (m *Module) LogRead(ctx context.Context, r ReadLog) error { return m.svc.LogRead(ctx, r) }

// SweepReadLog deletes up to limit read-log rows older than cutoff.
func (m *Module) SweepReadLog(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return m.svc.SweepReadLog(ctx, cutoff, limit)
}

// Recall runs one recall for the caller in ctx, as oml_recall does.
func (m *Module) Recall(ctx context.Context, query, scope string, k int) (wire.RecallOut, error) {
	res, err := m.svc.Recall(ctx, wire.RecallIn{Query: query, Scope: scope, K: k}.ToQuery())
	if err != nil {
		return wire.RecallOut{}, err
	}
	return wire.ToRecallOut(res), nil
}

// Served fusion weights of the full-text and vector legs, for evaluation
// tools that compare other weights with them.
var (
	ServedFullTextWeight = domain.DefaultFusion.FullText
	ServedVectorWeight   = domain.DefaultFusion.Vector
)

// WithRanking returns the context with other fusion weights (0 drops a
// leg) and with or without the vector leg's feedback, for evaluating the
// legs apart.
func (m *Module) WithRanking(fullText, vector float64, feedback bool) *Module {
	d := m.svc.Deps
	d.Fusion = domain.Fusion{K: domain.DefaultFusion.K, FullText: fullText, Vector: vector}
	d.Feedback = domain.Feedback{}
	if feedback {
		d.Feedback = domain.DefaultFeedback
	}
	svc := app.New(d)
	return &Module{svc: svc, http: httpapi.New(svc)}
}

// RecallOut is oml_recall's answer.
type RecallOut = wire.RecallOut

// recallGate is the gate of n recalls at once; none for n ≤ 0.
func recallGate(n int) *gate.Gate {
	if n <= 0 {
		return nil
	}
	return gate.New(n, "recalls run a few at a time on each replica (OML_RECALL_CONCURRENCY)",
		gate.Instruments{Waiting: metrics.RecallsWaiting, Refused: metrics.RecallTurnsRefused})
}
