// Package app holds the admission context's use cases: the submission
// pipeline (remember, learn, supersede), own-work reads, the serve
// ceremony with verdicts and promotion, held expiry, and review policy. It
// reaches other contexts and storage only through the ports declared here.
package app

import (
	"context"
	"errors"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// ErrNotFound and ErrConflict are what repositories return for a missing
// row and a uniqueness clash.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// Workarea is a workarea as the caller may use it (from the access context).
type Workarea struct {
	ID     string
	Path   string
	IDPath string
	Status string // development | committed | validated
	Root   bool
	Reader bool
	Writer bool
	Admin  bool
}

// Subtrees are where the caller holds one scope (the shared access
// vocabulary).
type Subtrees = scope.Subtrees

// Access is the access context as admission needs it.
type Access interface {
	// Workarea resolves ref (id or path) for the caller; a workarea the
	// caller holds nothing on is access.not_found.
	Workarea(ctx context.Context, ref string) (Workarea, error)
	// WorkareaByID is Workarea for an id admission stored.
	WorkareaByID(ctx context.Context, id string) (Workarea, error)
	// WorkareasByIDs is WorkareaByID for many ids in one read; ids the
	// caller holds nothing on (or unknown ones) are left out.
	WorkareasByIDs(ctx context.Context, ids []string) (map[string]Workarea, error)
	// Subtrees returns where the caller holds scope (reader, writer,
	// dreamer.review, …) after role caps and denies.
	Subtrees(ctx context.Context, s scope.Scope) (Subtrees, error)
	// Banned reports whether the caller's principal is banned, and why.
	Banned(ctx context.Context) (bool, string, error)
	// Fence is the simulations whose rows the caller may read (D10).
	Fence(ctx context.Context) (scope.Fence, error)
	// Simulation returns the workarea id path of a simulation the caller
	// may write into, in the caller's unit of work: one whose audience
	// does not hold the key is access.not_found, an ended one
	// simulation.ended.
	Simulation(ctx context.Context, id string) (workareaIDPath string, err error)
}

// Lineage is the lineage context: declared derivations and closures.
type Lineage interface {
	// Declare records that artifact derives from targets, in the caller's
	// unit of work.
	Declare(ctx context.Context, tenant, artifact string, targets []string, at time.Time) error
	// Closures returns, for each artifact, everything it derives from,
	// transitively, with the claims joined to it by a claim edge (one
	// into the artifact counts as one from it) and their lineage; refused
	// holds the typed refusal review.closure_bound, never a cut list, for
	// each artifact whose closure has more than limit members.
	Closures(ctx context.Context, tenant string, artifacts []string, limit int) (closures map[string][]string, refused map[string]error, err error)
	// Parents lists what artifact derives from directly.
	Parents(ctx context.Context, tenant, artifact string) ([]string, error)
	// NextEdge leases the oldest pending edge the reviewer may ratify
	// (both endpoints inside within, not proposed by principal, not in
	// skip).
	NextEdge(ctx context.Context, tenant, principal string, within Subtrees, skip []string, now, leaseUntil time.Time) (Edge, bool, error)
	// DecideEdge ratifies or rejects a leased edge, journalled, in the
	// caller's unit of work; both endpoints must lie inside within (the
	// reviewer's dreamer.review subtrees now), else access.denied.
	DecideEdge(ctx context.Context, tenant, edgeID string, approve bool, byKey string, within Subtrees) (Edge, error)
	// ServedEdge reads a served edge, in the caller's unit of work; both
	// endpoints must lie inside within, else access.denied.
	ServedEdge(ctx context.Context, tenant, edgeID string, within Subtrees) (Edge, error)
	// ReleaseEdge gives a pending edge back to the queue if lease is
	// still its lease, in the caller's unit of work.
	ReleaseEdge(ctx context.Context, tenant, edgeID string, lease time.Time) error
	// EdgeQueue counts, per the workarea of their from endpoint, the
	// pending edges NextEdge could serve the reviewer (leased ones too).
	EdgeQueue(ctx context.Context, tenant, principal string, within Subtrees, now time.Time) ([]QueueCount, error)
}

// QueueCount is what waits for one reviewer in one workarea.
type QueueCount struct {
	WorkareaID string
	Waiting    int // including Leased
	Leased     int // leased to a reviewer now
	Oldest     time.Time
}

// Edge is a proposed edge as a reviewer is shown it.
type Edge struct {
	ID         string
	Kind       string
	Label      string
	From, To   string
	Note       string
	State      string
	ProposedAt time.Time
}

// Uploads is the attachments context. Bind attaches completed upload
// sessions to a submission (an unknown, foreign or incomplete session is
// refused) and Release unbinds an erased claim's attachments, both in the
// caller's unit of work; Review returns what a reviewer reads for each
// attachment.
type Uploads interface {
	Bind(ctx context.Context, tenant, keyID, artifact string, sessions []string) ([]domain.Attachment, error)
	Release(ctx context.Context, tenant, actor, artifact string) error
	Review(ctx context.Context, tenant, artifact string) ([]ReviewMaterial, error)
}

// ReviewMaterial is an attachment as its reviewer reads it: extracted text
// where a deterministic extractor exists (Kind text or pdf_text), else
// provenance, digest and size (Kind opaque, with a Note saying why), and
// the scan of any text.
type ReviewMaterial struct {
	domain.Attachment
	Kind          string
	Text          string
	Truncated     bool
	Note          string
	UploadSession string
	UploadedBy    string
	CompletedAt   *time.Time
	Findings      []domain.Finding
}

// Index is the retrieval context's serving tier. Prepare runs before a
// submission's unit of work (it may call an embedding service); the rest
// run inside the unit of work that changes the claim.
type Index interface {
	// Prepare computes what indexing the text will need; admission only
	// carries the result to Stage.
	Prepare(ctx context.Context, text string) (Prepared, error)
	Stage(ctx context.Context, tenant, artifact string, p Prepared) error
	Promoted(ctx context.Context, c domain.Claim) error
	// Withdrawn drops every trace of the claim from the serving tier.
	Withdrawn(ctx context.Context, tenant, artifact string) error
}

// Prepared is the serving tier's opaque preparation of a text.
type Prepared any

// Signer signs submission envelopes with the deployment key.
type Signer interface {
	Sign(msg []byte) []byte
}

// Journal appends events in the caller's unit of work.
type Journal interface {
	Append(ctx context.Context, tenant string, e journal.Event) (journal.Appended, error)
}

// Transactor runs fn in one unit of work.
type Transactor interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Pipeliner runs reads of one unit of work that do not depend on each
// other, one after another, with the first statement of each sent
// together in one round trip (pg.DB.Together). Each fn runs twice, the
// first time only to find that statement, so it must be a read.
type Pipeliner interface {
	Together(ctx context.Context, fns ...func(ctx context.Context) error) error
}

// MineFilter selects a key's own submissions, newest first.
type MineFilter struct {
	WorkareaID string
	State      domain.State
	Before     string // cursor: artifact ids sort by time
	Limit      int
}

// PageFilter selects live pages: inside Within, of Workareas only when
// any are given, after (AfterWorkarea, AfterPath), under Prefix.
type PageFilter struct {
	Within        Subtrees
	Workareas     []string
	AfterWorkarea string
	AfterPath     string
	Prefix        string
	Limit         int
}

// QueueFilter selects review candidates for a reviewer.
type QueueFilter struct {
	Within    Subtrees
	Principal string // never serve an item this principal already judged
	Fence     scope.Fence
	Skip      []string
	Now       time.Time
	Limit     int
}

// Repository is admission's storage. Calls run in the unit of work carried
// by ctx when there is one.
type Repository interface {
	ClaimInsert(ctx context.Context, c domain.Claim, envelope, signature []byte) error
	// ClaimKeyHolder returns the newest non-erased version with that key
	// in the workarea and simulation ("" for none; a claim key names one
	// claim per workarea and simulation, D10) (ErrNotFound if none).
	ClaimKeyHolder(ctx context.Context, tenant, workarea, simulation, claimKey string) (domain.Claim, error)
	// ClaimKeyHead returns the newest held or promoted version of a claim
	// (ErrNotFound if none): the one a new version supersedes.
	ClaimKeyHead(ctx context.Context, tenant, workarea, simulation, claimKey string) (domain.Claim, error)
	ClaimGet(ctx context.Context, tenant, id string) (domain.Claim, error)
	// PageHead returns a page's newest promoted version, a tombstone
	// included (ErrNotFound if none).
	PageHead(ctx context.Context, tenant, workarea, path string) (domain.Claim, error)
	// PageByVersion returns the newest promoted version of a page whose
	// text hashes to version (ErrNotFound if none).
	PageByVersion(ctx context.Context, tenant, workarea, path, version string) (domain.Claim, error)
	// PageVersions lists a page's versions in states, newest first, below
	// version number before (0: none), one author's only unless author is "".
	PageVersions(ctx context.Context, tenant, workarea, path string, states []domain.State, author string, before, limit int, withText bool) ([]domain.Claim, error)
	// PageHeads lists live pages (promoted heads, tombstones left out).
	PageHeads(ctx context.Context, tenant string, f PageFilter) ([]domain.Claim, error)
	ClaimGetForUpdate(ctx context.Context, tenant, id string) (domain.Claim, error)
	ClaimsByIDs(ctx context.Context, tenant string, ids []string) ([]domain.Claim, error)
	// Authors maps each existing artifact among ids to its author
	// principal.
	Authors(ctx context.Context, tenant string, ids []string) (map[string]string, error)
	// ClaimUpdate, ClaimKeyLock, ServeDecide and the serve's own row in
	// ServeInsert may run in the round trip of the unit of work's next
	// statement, or of its commit (the adapter queues them), so their
	// error may come from that statement's caller: a caller only returns
	// it.
	ClaimUpdate(ctx context.Context, c domain.Claim) error
	// ClaimKeyLock serialises, from the unit of work's next statement
	// until it ends, the promotions of one claim's versions.
	ClaimKeyLock(ctx context.Context, tenant, workarea, simulation, claimKey string) error
	// PromotedVersions lists the promoted versions of one claim (ids and
	// versions), oldest first.
	PromotedVersions(ctx context.Context, tenant, workarea, simulation, claimKey string) ([]domain.Claim, error)
	Mine(ctx context.Context, tenant, keyID string, f MineFilter) ([]domain.Claim, error)

	// QueueCandidates lists held, unexpired, unleased items inside
	// f.Within, oldest first, without locking them.
	QueueCandidates(ctx context.Context, tenant string, f QueueFilter) ([]domain.Claim, error)
	// QueueCounts counts, per workarea, the held, unexpired items inside
	// f.Within that f.Principal neither wrote nor judged (leased ones too).
	QueueCounts(ctx context.Context, tenant string, f QueueFilter) ([]QueueCount, error)
	// ServeInsert takes the item's lease and records the serve;
	// ErrConflict when another reviewer leased the item first or, unless
	// wait, when another transaction has the item's row locked (wait
	// waits for it instead).
	ServeInsert(ctx context.Context, tenant string, s domain.Serve, wait bool) error
	ServeGetForUpdate(ctx context.Context, tenant, id string) (domain.Serve, error)
	// ServeLive reports whether a key holds an unexpired, undecided serve
	// of an artifact.
	ServeLive(ctx context.Context, tenant, artifact, keyID string, now time.Time) (bool, error)
	ServeDecide(ctx context.Context, tenant string, s domain.Serve, v domain.Verdict, reason string) error
	// ServeJudgedBy reports whether a principal already gave the artifact
	// a verdict, through any of its keys.
	ServeJudgedBy(ctx context.Context, tenant, artifact, principal string) (bool, error)
	// ServeRelease consumes a serve without a verdict, and ClaimLeaseClear
	// gives its held item back to the queue if lease is still its lease
	// (the serve's own, never one another reviewer took since).
	ServeRelease(ctx context.Context, tenant, id string, at time.Time) error
	ClaimLeaseClear(ctx context.Context, tenant, id string, lease time.Time) error

	PolicyAt(ctx context.Context, tenant, idPath string) (domain.Policy, error)
	// PoliciesAt is PolicyAt for many id paths at once, each with the
	// tenant's SelfSignedDevelopment switch (one read for a serve's
	// review settings).
	PoliciesAt(ctx context.Context, tenant string, idPaths []string) (map[string]domain.Policy, error)
	PolicySet(ctx context.Context, tenant, workareaID, idPath string, p domain.Policy) error
	SelfSignedDevelopment(ctx context.Context, tenant string) (bool, error)
	SetSelfSignedDevelopment(ctx context.Context, tenant string, on bool) error

	// ExpireDue moves held items past their expiry to expired (SKIP
	// LOCKED, so replicas share the work) and returns them.
	ExpireDue(ctx context.Context, now time.Time, limit int) ([]domain.Claim, error)
	// RecentPromoted lists the newest promoted claims under idPath that
	// fence admits.
	RecentPromoted(ctx context.Context, tenant, idPath string, fence scope.Fence, limit int) ([]domain.Claim, error)
}
