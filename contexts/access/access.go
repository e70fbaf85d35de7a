// Package access is the access bounded context: tenants, keys (hashed
// tokens), principals, the workarea tree with its status ladder and crew
// records, grants and effective access (D7). Its Module plugs into the
// shared transport; its Service is what other contexts' ports are wired to.
package access

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/contexts/access/internal/httpapi"
	"github.com/omlhub/oml/contexts/access/internal/mcptools"
	"github.com/omlhub/oml/contexts/access/internal/postgres"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/scope"
	"github.com/omlhub/oml/platform/transport"
)

// Deps are what the context needs from the process.
type Deps struct {
	DB          *pg.DB
	Journal     *journal.Journal
	Idempotency *idempotency.Store
	// GuideURL is where the agent guide is served (whoami reports it).
	GuideURL string
	// Edges, when set, shows a workarea's readable edges (the lineage
	// context).
	Edges Edges
	// Enrol is self-service enrolment: the tenant open to it ("" closes
	// it), its bounds, and the proxies whose X-Forwarded-For is honoured.
	Enrol      EnrolConfig
	TrustProxy []netip.Prefix
	// EnrolInbox puts requests in the admins' inbox (the inbox context).
	EnrolInbox EnrolInbox
	Now        func() time.Time
}

// EnrolConfig is the deployment's enrolment settings.
type EnrolConfig = app.EnrolConfig

// EnrolInbox is the inbox as enrolment needs it.
type EnrolInbox = app.EnrolInbox

// GrantSpec is one grant an enrolment approval gives.
type GrantSpec = app.GrantSpec

// Edges is the lineage context as access needs it.
type Edges = app.Edges

// WorkareaEdge is an edge out of a workarea.
type WorkareaEdge = app.WorkareaEdge

// Module is the access context, ready to mount.
type Module struct {
	svc      *app.Service
	http     *httpapi.Handlers
	enrol    *app.Enroller
	enrolAPI *httpapi.Enrol
	guideURL string
}

// New assembles the context.
func New(d Deps) *Module {
	svc := app.New(postgres.New(d.DB), d.Journal, d.DB, d.Now)
	if d.Edges != nil {
		svc.WithEdges(d.Edges)
	}
	enrol := app.NewEnroller(svc, postgres.NewEnrolments(d.DB), d.EnrolInbox, d.Enrol)
	return &Module{svc: svc, http: httpapi.New(svc, d.Idempotency, d.GuideURL), guideURL: d.GuideURL,
		enrol: enrol, enrolAPI: httpapi.NewEnrol(enrol, d.TrustProxy)}
}

// PublicRoutes registers the routes that take no key: enrolment.
func (m *Module) PublicRoutes(r chi.Router) { m.enrolAPI.Routes(r) }

// DecideEnrolment admits or refuses a pending enrolment request, in the
// caller's unit of work (the inbox's decision on its item).
func (m *Module) DecideEnrolment(ctx context.Context, enrolment string, approve bool, role string, grants []GrantSpec, note string) error {
	return m.enrol.Decide(ctx, enrolment, approve, role, grants, note)
}

// SweepEnrolments removes requests pending past their TTL.
func (m *Module) SweepEnrolments(ctx context.Context, limit int) (int, error) {
	return m.enrol.Sweep(ctx, limit)
}

// Routes registers the HTTP routes (under /v1).
func (m *Module) Routes(r chi.Router) { m.http.Routes(r) }

// Tools registers the MCP tools.
func (m *Module) Tools(t *transport.Tools) { mcptools.Register(t, m.svc, m.guideURL) }

// Authenticate resolves a bearer token; it is the transport's
// Authenticator.
func (m *Module) Authenticate(ctx context.Context, token string) (auth.Caller, error) {
	return m.svc.Authenticate(ctx, token)
}

// Bootstrapped is the result of [Module.Bootstrap].
type Bootstrapped = app.Bootstrapped

// Bootstrap creates a tenant with its universe and an admin key.
func (m *Module) Bootstrap(ctx context.Context, tenant string) (Bootstrapped, error) {
	return m.svc.Bootstrap(ctx, tenant)
}

// Workarea is a workarea with the caller's effective scopes there, for
// other contexts' ports (cmd/oml-server adapts it to theirs).
type Workarea struct {
	ID     string
	Path   string
	IDPath string
	Status string
	Root   bool
	Scopes []string
}

// Locate resolves ref (id or path) in a tenant with no caller and no
// access check: for operator commands that hold the database's
// credentials (oml-server subtree-index), never for a request.
func (m *Module) Locate(ctx context.Context, tenant, ref string) (Workarea, error) {
	w, err := m.svc.Locate(ctx, tenant, ref)
	return Workarea{ID: w.ID, Path: w.Path, IDPath: w.IDPath, Status: string(w.Status)}, err
}

// Effective resolves ref (id or path) for the caller in ctx; a workarea the
// caller holds nothing on is access.not_found.
func (m *Module) Effective(ctx context.Context, ref string) (Workarea, error) {
	w, scopes, err := m.svc.Effective(ctx, ref)
	if err != nil {
		return Workarea{}, err
	}
	return Workarea{ID: w.ID, Path: w.Path, IDPath: w.IDPath, Status: string(w.Status), Root: w.IsRoot(), Scopes: scopes.Names()}, nil
}

// EffectiveByIDs is Effective for many workarea ids in one read; the ones
// the caller holds nothing on, or that do not exist, are left out.
func (m *Module) EffectiveByIDs(ctx context.Context, ids []string) (map[string]Workarea, error) {
	ws, scopes, err := m.svc.EffectiveByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Workarea, len(ws))
	for id, w := range ws {
		out[id] = Workarea{ID: w.ID, Path: w.Path, IDPath: w.IDPath, Status: string(w.Status), Root: w.IsRoot(), Scopes: scopes[id].Names()}
	}
	return out, nil
}

// Subtrees returns the id paths where the caller holds scope (allow) and
// the ones its denies carve out.
func (m *Module) Subtrees(ctx context.Context, s scope.Scope) (scope.Subtrees, error) {
	sc, ok := domain.ParseScope(string(s))
	if !ok {
		return scope.Subtrees{}, fmt.Errorf("access: unknown scope %q", s)
	}
	allow, deny, err := m.svc.Subtrees(ctx, sc)
	return scope.Subtrees{Allow: allow, Deny: deny}, err
}

// Banned reports whether the caller's principal is banned, and why.
func (m *Module) Banned(ctx context.Context) (bool, string, error) {
	return m.svc.Banned(ctx)
}

// AdministersTenant refuses, with the typed error, a caller that may not
// use tenant-level admin verbs (an admin key with admin access on
// universe).
func (m *Module) AdministersTenant(ctx context.Context) error { return m.svc.AdministersTenant(ctx) }

// KeyAt is another key of the caller's tenant at one workarea.
type KeyAt struct {
	KeyID       string
	PrincipalID string
	Principal   string
	Role        string
	Scopes      []string
}

// KeyAt resolves a key of the caller's tenant and its effective scopes at
// the workarea with workareaID; an unknown or foreign key is
// access.not_found.
func (m *Module) KeyAt(ctx context.Context, keyID, workareaID string) (KeyAt, error) {
	k, err := m.svc.KeyAt(ctx, keyID, workareaID)
	if err != nil {
		return KeyAt{}, err
	}
	return KeyAt{KeyID: k.Key.ID, PrincipalID: k.Key.Principal.ID, Principal: k.Key.Principal.Name,
		Role: string(k.Key.Role), Scopes: k.Scopes.Names()}, nil
}

// Paths maps ids of the caller's tenant's workareas to their paths.
func (m *Module) Paths(ctx context.Context, ids []string) (map[string]string, error) {
	return m.svc.Paths(ctx, ids)
}

// WebSignedIn is a new web session or sign-in code; its Token is shown
// only once.
type WebSignedIn = app.WebSignedIn

// SignInWeb starts a web session for a pasted key.
func (m *Module) SignInWeb(ctx context.Context, key string, ttl time.Duration) (WebSignedIn, error) {
	return m.svc.SignInWeb(ctx, key, ttl)
}

// RedeemWebCode spends a one-time sign-in code for a web session.
func (m *Module) RedeemWebCode(ctx context.Context, code string, ttl time.Duration) (WebSignedIn, error) {
	return m.svc.RedeemWebCode(ctx, code, ttl)
}

// PeekWebCode returns the key a sign-in code would sign in as.
func (m *Module) PeekWebCode(ctx context.Context, code string) (auth.Caller, error) {
	return m.svc.PeekWebCode(ctx, code)
}

// ResolveWeb returns the caller a live web session acts as, and its id.
func (m *Module) ResolveWeb(ctx context.Context, token string) (auth.Caller, string, error) {
	return m.svc.ResolveWeb(ctx, token)
}

// SweepWeb deletes web credentials that ended or expired a week ago.
func (m *Module) SweepWeb(ctx context.Context, limit int) (int64, error) {
	return m.svc.SweepWeb(ctx, limit)
}

// SignOutWeb ends a web session.
func (m *Module) SignOutWeb(ctx context.Context, token string) error {
	return m.svc.SignOutWeb(ctx, token)
}

// Limiter enforces quotas and rate limits on one replica.
type Limiter = app.Limiter

// Limiter makes this replica's limiter: limits are split over replicas
// (OML_REPLICAS) and settings read again every refresh.
func (m *Module) Limiter(replicas int, refresh time.Duration) *Limiter {
	return m.svc.NewLimiter(replicas, refresh)
}

// Subtree is a workarea and the ids of its subtree the caller both
// administers and reads; Tenant says it administers the tenant too.
type Subtree struct {
	ID, Path, IDPath string
	IDs              []string
	Tenant           bool
}

// AdminSubtree resolves a workarea the caller administers and its
// subtree's ids (at most max, a larger one refused).
func (m *Module) AdminSubtree(ctx context.Context, ref string, max int) (Subtree, error) {
	w, ids, tenant, err := m.svc.AdminSubtree(ctx, ref, max)
	return Subtree{ID: w.ID, Path: w.Path, IDPath: w.IDPath, IDs: ids, Tenant: tenant}, err
}

// AdminOn resolves a workarea the caller holds admin on and returns its
// id and id path.
func (m *Module) AdminOn(ctx context.Context, ref string) (id, idPath string, err error) {
	w, err := m.svc.AdminOn(ctx, ref)
	return w.ID, w.IDPath, err
}

// KeyInTenant is access.not_found unless id is a key of the caller's
// tenant.
func (m *Module) KeyInTenant(ctx context.Context, id string) error { return m.svc.KeyInTenant(ctx, id) }
