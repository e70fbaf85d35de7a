// Package app holds the retrieval context's use cases: keeping the
// serving tier in step with promotion (stage at submission, index at
// promotion, withdraw at demotion or erasure), hybrid recall with steering
// first, and reindexing. Storage, the embedder and the access context are
// reached through the ports declared here.
package app

import (
	"context"
	"errors"
	"time"

	"github.com/omlhub/oml/contexts/retrieval/internal/domain"
	"github.com/omlhub/oml/platform/scope"
)

// ErrNotFound is what the repository returns for a missing row.
var ErrNotFound = errors.New("not found")

// Workarea is a workarea with the caller's read access there.
type Workarea struct {
	ID     string
	IDPath string
	Reader bool
	Admin  bool
}

// Subtrees are where the caller holds one scope (the shared access
// vocabulary).
type Subtrees = scope.Subtrees

// Access is the access context as retrieval needs it.
type Access interface {
	Workarea(ctx context.Context, ref string) (Workarea, error)
	Subtrees(ctx context.Context, s scope.Scope) (Subtrees, error)
	// Paths maps workarea ids of the caller's tenant to their paths.
	Paths(ctx context.Context, ids []string) (map[string]string, error)
	// AdministersTenant is nil when the caller is an admin on universe.
	AdministersTenant(ctx context.Context) error
	// Fence is the simulations whose rows the caller may read (D10).
	Fence(ctx context.Context) (scope.Fence, error)
}

// Embedder turns texts into L2-normalised vectors.
type Embedder interface {
	Model() string
	Dim() int
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery weighs the query's terms by their corpus rarity.
	EmbedQuery(ctx context.Context, text string, weights map[string]float32) ([]float32, error)
}

// Attachment is a bound attachment's digest, media type and size.
type Attachment struct {
	SHA256    string
	MediaType string
	SizeBytes int64
}

// Entry is one row of the serving tier: a promoted claim.
type Entry struct {
	TenantID       string
	ArtifactID     string
	WorkareaID     string
	WorkareaIDPath string
	Kind           string
	ClaimKey       string
	Version        int
	Text           string
	PromotedAt     time.Time
	SimulationID   string
	Attachments    []Attachment
	Embedding      []float32
	Model          string
}

// Filter is where a recall may look: under Scope, inside Allow, outside
// Deny (id paths), rows of no simulation or of one in Fence (D10).
type Filter struct {
	Scope string
	Allow []string
	Deny  []string
	Fence scope.Fence
}

// ReadLog is one read, as logged: a recall, or another context's read
// (the graph) logged through [Service.LogRead].
type ReadLog struct {
	ID          int64  // set when listed
	Operation   string // ReadRecall or ReadGraph
	TenantID    string
	KeyID       string
	WorkareaID  string
	QuerySHA256 []byte
	Returned    []string
	// Simulations holds, beside each returned id, the simulation of its
	// row ("" for none): a listing shows an admin only what its fence
	// admits (D10).
	Simulations []string
	At          time.Time
}

// ReadLogFilter selects read-log rows: of a key and/or in a workarea (""
// for any), below the row BeforeID (0: from the newest).
type ReadLogFilter struct {
	KeyID, WorkareaID string
	BeforeID          int64
	Limit             int
}

// The logged read operations.
const (
	ReadRecall = "recall"
	ReadGraph  = "graph"
)

// Repository is the serving tier's storage. Calls run in the unit of work
// carried by ctx when there is one.
type Repository interface {
	// Stage and Index write in the caller's unit of work; an error of
	// theirs may come from its next statement or its commit instead (the
	// adapter sends them in that statement's round trip).
	Stage(ctx context.Context, tenant, artifact string, vec []float32, model string) error
	// Index inserts a promoted claim, taking its staged embedding when
	// there is one, and updates the corpus statistics and counts.
	Index(ctx context.Context, e Entry) error
	// Remove deletes an entry (and any staged embedding) and updates the
	// statistics; a missing entry is not an error.
	Remove(ctx context.Context, tenant, artifact string) error

	// QueryTerms parses the query in the tenant's language and returns its
	// lexemes' document frequencies with the corpus statistics.
	QueryTerms(ctx context.Context, tenant, query string) ([]domain.TermStat, domain.Corpus, error)
	Reachable(ctx context.Context, tenant string, f Filter) (int64, error)
	// FullText runs the full-text leg, best first; with want.N > 0 it
	// also returns, in the same statement, the stored vectors under
	// want.Model of its best want.N rows (the vector leg's feedback; a row
	// without one is left out).
	FullText(ctx context.Context, tenant string, q domain.FullTextQuery, f Filter, limit int, want Vectors) (ids []string, vectors [][]float32, err error)
	Vector(ctx context.Context, tenant, model string, dim int, vec []float32, f Filter, limit int, s domain.Search) ([]string, error)
	// SubtreeIndex returns the id path of the deepest subtree holding
	// scope (an id path) that has a valid HNSW index of the tenant's
	// entries under the model, or "" for none, and the subtree's rows (the
	// maintained counts; a cached answer's may be a minute old).
	SubtreeIndex(ctx context.Context, tenant, model, scope string) (idPath string, rows int64, err error)
	// Embeddings returns the stored vectors of entries under one model.
	Embeddings(ctx context.Context, tenant, model string, ids []string) ([][]float32, error)
	// HitsAndSteering loads a recall's hits by id (in no order; one
	// withdrawn meanwhile is left out) and, in the same round trip, the
	// steering rows of the filter steer (the scope, its ancestors and its
	// subtree, as readable), unranked, by path depth then time, at most
	// limit.
	HitsAndSteering(ctx context.Context, tenant string, ids []string, steer Filter, limit int) (hits, steering []Entry, err error)
	LogRead(ctx context.Context, r ReadLog) error
	// ReadLogList lists a tenant's read log by f, newest first.
	ReadLogList(ctx context.Context, tenant string, f ReadLogFilter) ([]ReadLog, error)
	// ReadLogPurge deletes up to limit rows older than cutoff.
	ReadLogPurge(ctx context.Context, cutoff time.Time, limit int) (int64, error)

	// Reindexing.
	Tenants(ctx context.Context) ([]string, error)
	SetLanguage(ctx context.Context, tenant, language string) error
	Language(ctx context.Context, tenant string) (string, error)
	Page(ctx context.Context, tenant, after string, limit int) ([]Stored, error)
	SetEmbedding(ctx context.Context, tenant, artifact string, vec []float32, model string) error
	RebuildFullText(ctx context.Context, tenant, artifact string) error
	EnsureVectorIndex(ctx context.Context, model string, dim int) (bool, error)

	// Subtree indexes (oml-server subtree-index).
	EnsureSubtreeIndex(ctx context.Context, tenant, model string, dim int, idPath string) (SubtreeIndex, error)
	// DropSubtreeIndex returns the index's name and whether it was there.
	DropSubtreeIndex(ctx context.Context, tenant, model, idPath string) (string, bool, error)
	ListSubtreeIndexes(ctx context.Context, tenant string) ([]ListedSubtreeIndex, error)
}

// Vectors asks a leg for the stored vectors, under Model, of its best N
// rows.
type Vectors struct {
	N     int
	Model string
}

// ListedSubtreeIndex is a subtree index as the catalog shows it: its name,
// whether Postgres may use it (an interrupted build leaves it invalid),
// its size and its predicate (tenant, model and subtree).
type ListedSubtreeIndex struct {
	Name      string `json:"index"`
	Valid     bool   `json:"valid"`
	Bytes     int64  `json:"bytes"`
	Predicate string `json:"predicate"`
}

// DroppedSubtreeIndex is what a drop did.
type DroppedSubtreeIndex struct {
	Tenant  string `json:"tenant_id"`
	IDPath  string `json:"id_path"`
	Model   string `json:"model"`
	Name    string `json:"index"`
	Dropped bool   `json:"dropped"`
}

// SubtreeIndex is an HNSW index of one tenant's entries under one
// subtree, for one model.
type SubtreeIndex struct {
	Tenant string `json:"tenant_id"`
	IDPath string `json:"id_path"`
	Model  string `json:"model"`
	Name   string `json:"index,omitempty"`
	// Built says this run built it (false: it was there already).
	Built bool `json:"built"`
	// Rows and Bytes are the index's entries (Postgres's estimate) and
	// size.
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
}

// Stored is an entry as reindexing sees it: its text, the model of its
// embedding ("" for none) and whether its tsvector matches the tenant's
// language.
type Stored struct {
	ArtifactID string
	Text       string
	Model      string
	TSVCurrent bool
}

// Transactor runs fn in a unit of work. (Recall opens none: its
// statements are each their own, Service.Recall.)
type Transactor interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}
