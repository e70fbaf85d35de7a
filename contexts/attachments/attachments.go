// Package attachments is the attachments bounded context: resumable upload
// sessions whose parts arrive in order by plain HTTP PUT on any replica,
// content stored once per tenant, encrypted and addressed by a keyed hash
// of its digest in S3 (or a directory for `make run`), bound to claims at
// submission, read back by those who may read the claim, shown to
// reviewers as extracted text, and shredded when the last claim carrying
// it is erased.
package attachments

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/attachments/internal/app"
	"github.com/omlhub/oml/contexts/attachments/internal/blobstore"
	"github.com/omlhub/oml/contexts/attachments/internal/extract"
	"github.com/omlhub/oml/contexts/attachments/internal/httpapi"
	"github.com/omlhub/oml/contexts/attachments/internal/mcptools"
	"github.com/omlhub/oml/contexts/attachments/internal/postgres"
	"github.com/omlhub/oml/contexts/attachments/internal/seal"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/transport"
)

// The ports other contexts fill and the types they exchange.
type (
	// Access is the access context as attachments needs it.
	Access = app.Access
	// Claims is the admission context as attachments needs it.
	Claims = app.Claims
	// Attachment is bound content as a claim carries it.
	Attachment = app.Attachment
	// Material is an attachment's review material.
	Material = app.Material
	// Config bounds uploads.
	Config = app.Config
	// Store is an object store.
	Store = blobstore.Store
)

// OpenStore opens the store OML_BLOB_STORE names (file:///dir or
// s3://bucket?endpoint=…&region=…).
func OpenStore(ctx context.Context, spec string, getenv func(string) string) (Store, error) {
	return blobstore.Open(ctx, spec, getenv)
}

// Ping checks that store answers: reading the size of an object that
// does not exist must come back "not found", not an error.
func Ping(ctx context.Context, store Store) error {
	_, err := store.Size(ctx, "oml-readiness-probe")
	if err == nil || errors.Is(err, blobstore.ErrNotFound) {
		return nil
	}
	return err
}

// Deps are what the context needs from the process.
type Deps struct {
	DB        *pg.DB
	Journal   *journal.Journal
	Store     Store
	MasterKey []byte
	// PreviousMasterKeys still unwrap during a master-key rotation, and
	// AddressKey (when set) makes the content addresses instead of
	// MasterKey (docs/OPERATIONS.md, Rotating keys).
	PreviousMasterKeys [][]byte
	AddressKey         []byte
	Access             Access
	Claims             Claims
	Log                *slog.Logger
	Now                func() time.Time
	Config             Config
	// PDF parses PDFs for reviewers in a child process ([SubprocessPDF]);
	// nil parses in this process, which only tests should do.
	PDF PDFSandbox
}

// PDFSandbox parses a PDF where a crafted file cannot take the server
// down (a cyclic page tree makes the parser recurse without end).
type PDFSandbox = extract.Sandbox

// SubprocessPDF runs the PDF parser as `name args…` (oml-server's hidden
// extract-pdf command) with an environment of env alone.
func SubprocessPDF(env []string, name string, args ...string) PDFSandbox {
	return extract.Subprocess(env, name, args...)
}

// RunPDFChild is the child's side: one PDF on in, its material as JSON on
// out, under its own stack, heap and address-space limits.
func RunPDFChild(in io.Reader, out io.Writer) error { return extract.RunChild(in, out) }

// AddressKey is the content-address key a master key makes; a rotation
// keeps it in a file of its own (Deps.AddressKey).
func AddressKey(master []byte) ([]byte, error) { return seal.AddressKey(master) }

// RewrapDeps are what `oml-server rewrap` needs: the database and the
// keys, no object store (data keys live in Postgres).
type RewrapDeps struct {
	DB                 *pg.DB
	Journal            *journal.Journal
	MasterKey          []byte
	PreviousMasterKeys [][]byte
	AddressKey         []byte
}

// RewrapReport is what a rewrap did and how the stored keys stand.
type RewrapReport = app.RewrapReport

// Rewrap moves every stored data key a previous master key wraps to the
// current master key, batch keys per transaction, journalled per tenant
// (attachment.rewrap); with check it only counts. Safe while replicas
// serve.
func Rewrap(ctx context.Context, d RewrapDeps, batch int, check bool) (RewrapReport, error) {
	keys, err := seal.NewKeys(seal.Secrets{Master: d.MasterKey, Previous: d.PreviousMasterKeys, Address: d.AddressKey})
	if err != nil {
		return RewrapReport{}, err
	}
	svc := app.New(app.Deps{Repo: postgres.New(d.DB), Journal: d.Journal, Tx: d.DB, Keys: keys})
	return svc.Rewrap(ctx, batch, check)
}

// Module is the attachments context.
type Module struct {
	svc  *app.Service
	http *httpapi.Handlers
}

// New assembles the context.
func New(d Deps) (*Module, error) {
	keys, err := seal.NewKeys(seal.Secrets{Master: d.MasterKey, Previous: d.PreviousMasterKeys, Address: d.AddressKey})
	if err != nil {
		return nil, err
	}
	svc := app.New(app.Deps{
		Repo: postgres.New(d.DB), Store: d.Store, Access: d.Access, Claims: d.Claims, Journal: d.Journal, Tx: d.DB,
		Keys: keys, Log: d.Log, Now: d.Now, Config: d.Config, PDF: d.PDF,
	})
	return &Module{svc: svc, http: httpapi.New(svc)}, nil
}

// CheckKeys refuses an address key other than the one the stored content
// was addressed with (a master key rotated without OML_ADDRESS_KEY_FILE);
// serve runs it before it listens.
func (m *Module) CheckKeys(ctx context.Context) error { return m.svc.CheckAddressKey(ctx) }

// Routes registers the HTTP routes (under /v1).
func (m *Module) Routes(r chi.Router) { m.http.Routes(r) }

// StreamRoutes registers the routes that bound their own bodies.
func (m *Module) StreamRoutes(r chi.Router) { m.http.StreamRoutes(r) }

// Tools registers the MCP tools.
func (m *Module) Tools(t *transport.Tools) { mcptools.Register(t, m.svc) }

// Bind attaches complete upload sessions of keyID to an artifact, in the
// submission's unit of work.
func (m *Module) Bind(ctx context.Context, tenant, keyID, artifact string, sessions []string) ([]Attachment, error) {
	return m.svc.Bind(ctx, tenant, keyID, artifact, sessions)
}

// Release unbinds an erased artifact's attachments and shreds content no
// claim needs any more, in the erasure's unit of work.
func (m *Module) Release(ctx context.Context, tenant, actor, artifact string) error {
	return m.svc.Release(ctx, tenant, actor, artifact)
}

// Review returns an artifact's attachments as its reviewer reads them.
func (m *Module) Review(ctx context.Context, tenant, artifact string) ([]Material, error) {
	return m.svc.Review(ctx, tenant, artifact)
}

// Sweep expires lapsed sessions, shreds unneeded content and deletes
// queued objects (any replica, any time).
func (m *Module) Sweep(ctx context.Context, batch int) (int, error) { return m.svc.Sweep(ctx, batch) }
