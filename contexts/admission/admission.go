// Package admission is the admission bounded context: what an agent
// writes is held until an identity that did not write it ratifies it (R2,
// R3). It owns claims and their versions, the submission pipeline (scan,
// signed envelope), review policy, the serve ceremony (D14), verdicts,
// promotion and held expiry.
package admission

import (
	"context"
	"crypto/ed25519"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/admission/internal/app"
	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/contexts/admission/internal/httpapi"
	"github.com/omlhub/oml/contexts/admission/internal/mcptools"
	"github.com/omlhub/oml/contexts/admission/internal/postgres"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/scope"
	"github.com/omlhub/oml/platform/transport"
)

// The ports other contexts fill, re-exported for cmd/oml-server's wiring.
type (
	// Access is the access context as admission needs it.
	Access = app.Access
	// Workarea is a workarea with the caller's scopes there.
	Workarea = app.Workarea
	// Subtrees are where the caller holds a scope.
	Subtrees = app.Subtrees
	// Lineage is the lineage context as admission needs it.
	Lineage = app.Lineage
	// Uploads is the attachments context: binding, release, review material.
	Uploads = app.Uploads
	// ReviewMaterial is an attachment as its reviewer reads it.
	ReviewMaterial = app.ReviewMaterial
	// Finding is a scan finding.
	Finding = domain.Finding
	// Index is the retrieval context's serving tier.
	Index = app.Index
	// Edge is a proposed edge as a reviewer is shown it.
	Edge = app.Edge
	// QueueCount is what waits for one reviewer in one workarea.
	QueueCount = app.QueueCount
	// Prepared is the serving tier's opaque preparation of a text.
	Prepared = app.Prepared
	// Claim is one version of a claim, as the serving tier receives it.
	Claim = domain.Claim
	// Attachment is a bound upload's digest, media type and size.
	Attachment = domain.Attachment
)

// Deps are what the context needs from the process.
type Deps struct {
	DB          *pg.DB
	Journal     *journal.Journal
	Idempotency *idempotency.Store
	Access      Access
	Lineage     Lineage
	Uploads     Uploads
	Index       Index
	SigningKey  ed25519.PrivateKey
	MaxText     int
	ServeTTL    time.Duration
	// ClosureMax bounds the lineage closure of one independence check
	// (OML_REVIEW_CLOSURE_MAX).
	ClosureMax int
	Now        func() time.Time
}

// Module is the admission context, ready to mount.
type Module struct {
	svc  *app.Service
	http *httpapi.Handlers
	idem *idempotency.Store
	repo *postgres.Repository
	tx   *pg.DB
}

type signer ed25519.PrivateKey

func (s signer) Sign(msg []byte) []byte { return ed25519.Sign(ed25519.PrivateKey(s), msg) }

// New assembles the context.
func New(d Deps) *Module {
	repo := postgres.New(d.DB)
	svc := app.New(app.Deps{
		Repo: repo, Access: d.Access, Lineage: d.Lineage, Uploads: d.Uploads, Index: d.Index,
		Signer: signer(d.SigningKey), Journal: d.Journal, Tx: d.DB, Reads: d.DB, Now: d.Now,
	}, app.Config{MaxTextBytes: d.MaxText, ServeTTL: d.ServeTTL, ClosureMax: d.ClosureMax})
	public := d.SigningKey.Public().(ed25519.PublicKey)
	return &Module{svc: svc, http: httpapi.New(svc, d.Idempotency, public), idem: d.Idempotency, repo: repo, tx: d.DB}
}

// Routes registers the HTTP routes (under /v1).
func (m *Module) Routes(r chi.Router) { m.http.Routes(r) }

// Tools registers the MCP tools.
func (m *Module) Tools(t *transport.Tools) { mcptools.Register(t, m.svc, m.idem) }

// SweepExpired settles held items past their expiry; safe on every replica.
func (m *Module) SweepExpired(ctx context.Context, batch int) (int, error) {
	return m.svc.SweepExpired(ctx, batch)
}

// QueueDepth counts held items awaiting review per tenant id, across
// tenants (for /metrics; operators see counts, never content).
func (m *Module) QueueDepth(ctx context.Context) (map[string]int64, error) {
	return m.repo.QueueDepth(ctx)
}

// ExpiryLag is how long the held item due longest has waited for the
// expiry sweep at now (0 when none is overdue).
func (m *Module) ExpiryLag(ctx context.Context, now time.Time) (time.Duration, error) {
	now = now.Round(time.Microsecond) // as Postgres stores it: none due is 0
	due, err := m.repo.OldestDue(ctx, now)
	if err != nil {
		return 0, err
	}
	return now.Sub(due), nil
}

// ClaimView is a claim with how the caller may see it.
type ClaimView = app.ClaimView

// Visibility is how the caller may see a claim.
type Visibility = app.Visibility

// The visibilities.
const (
	Absent   = app.Absent
	BodyLess = app.BodyLess
	Readable = app.Readable
)

// View classifies claims for the caller in ctx (the lineage graph reads
// through it).
func (m *Module) View(ctx context.Context, ids []string) (map[string]ClaimView, error) {
	return m.svc.View(ctx, ids)
}

// CanReadContent reports whether the caller may read a claim's content
// (attachments included): author, reader of a promoted claim, or the
// reviewer it is served to.
func (m *Module) CanReadContent(ctx context.Context, artifact string) (bool, error) {
	return m.svc.CanReadContent(ctx, artifact)
}

// RecentReadable lists the newest promoted claims under idPath the caller
// may read.
func (m *Module) RecentReadable(ctx context.Context, idPath string, limit int) ([]Claim, error) {
	return m.svc.RecentReadable(ctx, idPath, limit)
}

// EvidenceClaim is a submission as the evidence export records it.
type EvidenceClaim = postgres.EvidenceClaim

// EvidenceServe is a serve and its verdict as the evidence export
// records it.
type EvidenceServe = postgres.EvidenceServe

// Evidence reads, in the caller's unit of work, the claims submitted and
// the serves made in the workareas in [from, to], at most limit+1 of each
// (so the caller can refuse a range too large).
func (m *Module) Evidence(ctx context.Context, tenant string, workareas []string, fence scope.Fence, from, to time.Time, limit int) ([]EvidenceClaim, []EvidenceServe, error) {
	return m.repo.Evidence(ctx, tenant, workareas, fence, from, to, limit)
}

// ErrNotFound is what the page reads return for a missing page.
var ErrNotFound = app.ErrNotFound

// PageFilter selects live knowledge-base pages.
type PageFilter = app.PageFilter

// SubmitPage submits a knowledge-base page version (the knowledge
// context's port): prepared outside any unit of work, then committed
// held, with then run in the same unit of work. base is the promoted head
// the version was written against (sha256:…, "absent", or "" for last
// writer wins), checked now and again at promotion.
func (m *Module) SubmitPage(ctx context.Context, workarea, path, content, base string, then func(ctx context.Context, c Claim) error) (Claim, error) {
	return m.submitVersioned(ctx, domain.KindPage, workarea, path, content, base, then)
}

// SubmitDocument submits a document's version (the documents context's
// port) as SubmitPage does a page's: key /doc/<id>, held for review.
func (m *Module) SubmitDocument(ctx context.Context, workarea, key, content, base string, then func(ctx context.Context, c Claim) error) (Claim, error) {
	return m.submitVersioned(ctx, domain.KindDocument, workarea, key, content, base, then)
}

func (m *Module) submitVersioned(ctx context.Context, kind domain.Kind, workarea, key, content, base string, then func(ctx context.Context, c Claim) error) (Claim, error) {
	p, err := m.svc.PreparePage(ctx, domain.Submission{Kind: kind, Workarea: workarea, ClaimKey: key, Text: content, BaseVersion: base})
	if err != nil {
		return Claim{}, err
	}
	var out Claim
	err = m.tx.InTx(ctx, func(ctx context.Context) error {
		r, err := m.svc.Commit(ctx, p)
		if err != nil {
			return err
		}
		out = r.Claim
		return then(ctx, r.Claim)
	})
	return out, err
}

// PageHead is a page's newest promoted version, a tombstone included
// (ErrNotFound). No access check: the knowledge context makes it.
func (m *Module) PageHead(ctx context.Context, tenant, workarea, path string) (Claim, error) {
	return m.repo.PageHead(ctx, tenant, workarea, path)
}

// PageByVersion is the newest promoted version of a page with that hash.
func (m *Module) PageByVersion(ctx context.Context, tenant, workarea, path, version string) (Claim, error) {
	return m.repo.PageByVersion(ctx, tenant, workarea, path, version)
}

// PageVersions lists a page's versions in states, newest first; their
// texts only withText.
func (m *Module) PageVersions(ctx context.Context, tenant, workarea, path string, states []string, author string, before, limit int, withText bool) ([]Claim, error) {
	st := make([]domain.State, len(states))
	for i, s := range states {
		st[i] = domain.State(s)
	}
	return m.repo.PageVersions(ctx, tenant, workarea, path, st, author, before, limit, withText)
}

// PromotedVersions lists a page's (or document's) promoted versions,
// oldest first: their ids and numbers, nothing else.
func (m *Module) PromotedVersions(ctx context.Context, tenant, workarea, key string) ([]Claim, error) {
	return m.repo.PromotedVersions(ctx, tenant, workarea, "", key)
}

// PageHeads lists live pages.
func (m *Module) PageHeads(ctx context.Context, tenant string, f PageFilter) ([]Claim, error) {
	return m.repo.PageHeads(ctx, tenant, f)
}

// ShownVersion is a claim's version number as other contexts show it: a
// page's or document's is 0, since it counts every identity's versions of
// it, held ones included (R3).
func ShownVersion(c Claim) int {
	if c.Kind.Versioned() {
		return 0
	}
	return c.Version
}
