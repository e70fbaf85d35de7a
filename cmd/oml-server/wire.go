package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omlhub/oml/contexts/access"
	"github.com/omlhub/oml/contexts/admission"
	"github.com/omlhub/oml/contexts/attachments"
	"github.com/omlhub/oml/contexts/audit"
	"github.com/omlhub/oml/contexts/documents"
	"github.com/omlhub/oml/contexts/inbox"
	"github.com/omlhub/oml/contexts/knowledge"
	"github.com/omlhub/oml/contexts/lineage"
	"github.com/omlhub/oml/contexts/retrieval"
	"github.com/omlhub/oml/contexts/sessions"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/config"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/metrics"
	"github.com/omlhub/oml/platform/migrate"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/scope"
	"github.com/omlhub/oml/platform/transport"
	"github.com/omlhub/oml/sql/migrations"
	"github.com/omlhub/oml/web"
)

// app is the assembled process: contexts wired to each other and to the
// shared kernel.
type app struct {
	access      *access.Module
	admission   *admission.Module
	retrieval   *retrieval.Module
	attachments *attachments.Module
	inbox       *inbox.Module
	idempotency *idempotency.Store
	// journal's sweep chains events a crash left pending.
	journal *journal.Journal
	// listener wakes waits across replicas; serve runs it.
	listener *pg.Listener
	handler  http.Handler
	// ready is /readyz's check; serve marks it draining on SIGTERM.
	ready *readiness
	// metrics serves /metrics; on the main handler too unless
	// OML_METRICS_LISTEN gives it its own listener.
	metrics http.Handler
	// surface and modules made handler; benchmarks make variants of it.
	surface transport.Options
	modules []transport.Module
}

func assemble(cfg config.Config, db *pg.DB, log *slog.Logger, k keys, store attachments.Store) (*app, error) {
	runner, err := migrate.New(db.Pool, migrations.FS)
	if err != nil {
		return nil, err
	}
	j := journal.New(db, nil)
	idem := idempotency.New(db)
	// The contexts call each other through ports in both directions, so
	// the adapters bind to their modules once all exist.
	var (
		edges    = &edgesPort{}
		claims   = &claimsPort{}
		readable = &readablePort{}
		enrolBox = &enrolInboxPort{}
		ownSess  = &searchSessions{}
	)
	sims := audit.NewAudiences(db)
	acc := access.New(access.Deps{
		DB: db, Journal: j, Idempotency: idem, Edges: edges,
		GuideURL: cfg.PublicURL + transport.GuidePath,
		Enrol: access.EnrolConfig{Tenant: cfg.EnrolTenant, PendingMax: cfg.EnrolPendingMax, PendingTTL: cfg.EnrolPendingTTL,
			PerHour: cfg.EnrolPerHour},
		TrustProxy: cfg.TrustProxy, EnrolInbox: enrolBox,
	})
	ret, err := retrieval.New(retrieval.Deps{DB: db, Access: retrievalAccess{acc, sims}, Sessions: ownSess, Embedder: embedderConfig(cfg), RecallConcurrency: cfg.RecallConcurrency})
	if err != nil {
		return nil, err
	}
	lin := lineage.New(lineage.Deps{DB: db, Journal: j, Access: lineageAccess{acc}, Claims: claims, Reads: readLogPort{ret}})
	att, err := attachments.New(attachments.Deps{
		DB: db, Journal: j, Store: store, MasterKey: k.master, PreviousMasterKeys: k.previous, AddressKey: k.address, Access: attachmentsAccess{acc}, Claims: readable, Log: log,
		Config: attachments.Config{MaxSize: cfg.MaxUploadBytes, MaxOpen: cfg.MaxOpenUploads, TTL: cfg.UploadTTL, LeaseTTL: cfg.UploadLeaseTTL},
		PDF:    pdfSandbox(log),
	})
	if err != nil {
		return nil, fmt.Errorf("attachments: %w", err)
	}
	adm := admission.New(admission.Deps{
		DB: db, Journal: j, Idempotency: idem,
		Access:  accessPort{acc, sims},
		Lineage: lineagePort{lin},
		Uploads: uploadsPort{att}, Index: indexPort{ret},
		SigningKey: k.signing, MaxText: cfg.MaxTextBytes, ServeTTL: cfg.ServeTTL, ClosureMax: cfg.ClosureMax,
	})
	edges.m, claims.m, readable.m = lin, adm, adm
	docs := documents.New(documents.Deps{DB: db, Access: documentsAccess{acc}, Admission: documentsAdmission{adm}, PublicURL: cfg.PublicURL})
	kb := knowledge.New(knowledge.Deps{DB: db, Access: knowledgeAccess{acc}, Admission: knowledgeAdmission{adm}})
	ses := sessions.New(sessions.Deps{DB: db, Journal: j, Idempotency: idem, Access: sessionsAccess{acc}, KB: sessionsKB{kb},
		Search: brainSearch{ret}})
	ownSess.m = ses
	listener := pg.NewListener(db, log, inbox.WakeChannel)
	inb := inbox.New(inbox.Deps{DB: db, Journal: j, Idempotency: idem, Access: inboxAccess{acc, sims}, Enrolments: enrolmentsPort{acc}, Search: inboxSearch{ret}, Pages: briefPages{kb},
		Listener: listener, Sessions: briefSessions{ses},
		Limits: inbox.Limits{EventsPerWorkarea: cfg.EventsPerWorkarea, OpenMax: cfg.InboxOpenMax}})
	enrolBox.m = inb
	trailer, err := inb.Trailer()
	if err != nil {
		return nil, fmt.Errorf("notifications trailer: %w", err)
	}
	pages, err := web.New(web.Deps{
		Sessions: webSessions{acc}, Logger: log, SessionTTL: cfg.WebSessionTTL,
		PublicURL: cfg.PublicURL, AllowedOrigins: cfg.AllowedOrigins, Documents: webDocuments{docs},
	})
	if err != nil {
		return nil, err
	}
	ready := &readiness{db: db, runner: runner, store: store}
	reg, err := metrics.NewRegistry(metrics.NewPoolCollector(db.Pool), metrics.NewStateCollector(metrics.State{
		QueueDepth: adm.QueueDepth,
		Overdue: func(ctx context.Context) (map[string]time.Duration, error) {
			now := time.Now()
			held, err := adm.ExpiryLag(ctx, now)
			if err != nil {
				return nil, err
			}
			due, err := inb.DeadlineLag(ctx, now)
			if err != nil {
				return nil, err
			}
			return map[string]time.Duration{sweepHeld: held, sweepInbox: due}, nil
		},
	}))
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	scrape := metrics.Handler(reg)
	opts := transport.Options{
		Logger:          log,
		Authenticator:   acc,
		MaxBodyBytes:    cfg.MaxBodyBytes,
		MaxMCPBodyBytes: cfg.MaxMCPBodyBytes,
		PublicURL:       cfg.PublicURL,
		AllowedOrigins:  cfg.AllowedOrigins,
		Name:            "oml",
		Ready:           ready.check,
		Trailer:         trailer,
		Pages:           pages,
		Limiter:         acc.Limiter(cfg.Replicas, cfg.QuotaRefresh),
		KB:              kbResources{kb},
	}
	aud := audit.New(audit.Deps{Tx: db, Journal: j, Access: auditAccess{acc}, Admission: auditAdmission{adm}, Signer: k.signing,
		ReciprocalRate: cfg.ReciprocalRate})
	modules := []transport.Module{acc, adm, lin, ret, att, inb, ses, kb, docs, aud}
	if cfg.MetricsListen == "" {
		opts.Metrics, opts.MetricsToken = scrape, cfg.MetricsToken
		if cfg.MetricsToken == "" {
			log.Info("/metrics is not served: set OML_METRICS_LISTEN (a private listener) or OML_METRICS_TOKEN")
		}
	}
	return &app{access: acc, admission: adm, retrieval: ret, attachments: att, inbox: inb, idempotency: idem, journal: j, listener: listener,
		handler: transport.New(opts, modules...), surface: opts, modules: modules, ready: ready, metrics: scrape}, nil
}

// auditAccess adapts the access context to the audit context's port.
type auditAccess struct{ m *access.Module }

func (a auditAccess) AdminOn(ctx context.Context, ref string) (string, string, error) {
	return a.m.AdminOn(ctx, ref)
}

func (a auditAccess) KeyInTenant(ctx context.Context, id string) error {
	return a.m.KeyInTenant(ctx, id)
}

func (a auditAccess) AdministersTenant(ctx context.Context) error { return a.m.AdministersTenant(ctx) }

func (a auditAccess) AdminSubtree(ctx context.Context, ref string, max int) (audit.Subtree, error) {
	s, err := a.m.AdminSubtree(ctx, ref, max)
	return audit.Subtree{ID: s.ID, Path: s.Path, IDPath: s.IDPath, IDs: s.IDs, Tenant: s.Tenant}, err
}

// auditAdmission adapts the admission context's records to the evidence
// file's.
type auditAdmission struct{ m *admission.Module }

func (a auditAdmission) Evidence(ctx context.Context, tenant string, workareas []string, fence scope.Fence, from, to time.Time, limit int) ([]audit.Claim, []audit.Serve, error) {
	cs, ss, err := a.m.Evidence(ctx, tenant, workareas, fence, from, to, limit)
	if err != nil {
		return nil, nil, err
	}
	claims := make([]audit.Claim, len(cs))
	for i, c := range cs {
		claims[i] = audit.Claim{ArtifactID: c.ID, WorkareaID: c.WorkareaID, ClaimKey: c.ClaimKey, Version: c.Version, Kind: c.Kind,
			State: c.State, AuthorKeyID: c.AuthorKeyID, AuthorPrincipal: c.AuthorPrincipal, SelfSigned: c.SelfSigned,
			SubmittedAt: c.SubmittedAt, PromotedAt: utcPtr(c.PromotedAt), SettledAt: utcPtr(c.SettledAt), Envelope: c.Envelope,
			Signature: base64.StdEncoding.EncodeToString(c.Signature)}
	}
	serves := make([]audit.Serve, len(ss))
	for i, s := range ss {
		serves[i] = audit.Serve{ServeID: s.ID, ArtifactID: s.ArtifactID, ReviewerKeyID: s.ReviewerKeyID, ReviewerPrincipal: s.ReviewerPrincipal,
			AuthorPrincipal: s.AuthorPrincipal, SelfSigned: s.SelfSigned, ServedAt: s.ServedAt, ExpiresAt: s.ExpiresAt,
			ConsumedAt: utcPtr(s.ConsumedAt), Verdict: s.Verdict, Reason: s.Reason, Closure: s.Closure}
	}
	return claims, serves, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// webSessions adapts the access context's web sign-in to the pages'
// Sessions port.
type webSessions struct{ m *access.Module }

func (a webSessions) SignIn(ctx context.Context, key string, ttl time.Duration) (web.SignedIn, error) {
	s, err := a.m.SignInWeb(ctx, key, ttl)
	return web.SignedIn{Token: s.Token, ExpiresAt: s.ExpiresAt, Caller: s.Caller}, err
}

func (a webSessions) RedeemCode(ctx context.Context, code string, ttl time.Duration) (web.SignedIn, error) {
	s, err := a.m.RedeemWebCode(ctx, code, ttl)
	return web.SignedIn{Token: s.Token, ExpiresAt: s.ExpiresAt, Caller: s.Caller}, err
}

func (a webSessions) PeekCode(ctx context.Context, code string) (auth.Caller, error) {
	return a.m.PeekWebCode(ctx, code)
}

func (a webSessions) Resolve(ctx context.Context, token string) (auth.Caller, error) {
	c, _, err := a.m.ResolveWeb(ctx, token)
	return c, err
}

func (a webSessions) SignOut(ctx context.Context, token string) error {
	return a.m.SignOutWeb(ctx, token)
}

// briefSessions adapts the sessions context to the inbox's Sessions port
// (the session brief's previous session).
type briefSessions struct{ m *sessions.Module }

func (b briefSessions) Previous(ctx context.Context, workareaID string) (inbox.PreviousSession, bool, error) {
	s, ok, err := b.m.Previous(ctx, workareaID)
	if err != nil || !ok {
		return inbox.PreviousSession{}, false, err
	}
	return inbox.PreviousSession{ID: s.ID, Name: s.Name, Status: string(s.Status), LastActivity: s.UpdatedAt,
		HandoffNote: s.HandoffNote, RecoveryPath: sessions.RecoveryPath}, true, nil
}

// enrolInboxPort adapts the inbox context to access's EnrolInbox port
// (bound once the inbox exists).
type enrolInboxPort struct{ m *inbox.Module }

func (p *enrolInboxPort) EnrolRequest(ctx context.Context, tenant, root, rootIDPath, enrolment, reason, peer string, at, deadline time.Time) (string, error) {
	return p.m.EnrolRequest(ctx, tenant, root, rootIDPath, enrolment, reason, peer, at, deadline)
}

// enrolmentsPort adapts the access context to the inbox's Enrolments port.
type enrolmentsPort struct{ m *access.Module }

func (p enrolmentsPort) Decide(ctx context.Context, enrolment string, approve bool, role string, grants []inbox.EnrolGrant, note string) error {
	gs := make([]access.GrantSpec, len(grants))
	for i, g := range grants {
		gs[i] = access.GrantSpec{Workarea: g.Workarea, Scope: g.Scope}
	}
	return p.m.DecideEnrolment(ctx, enrolment, approve, role, gs, note)
}

// inboxAccess adapts the access context to the inbox's Access port.
type inboxAccess struct {
	m    *access.Module
	sims audit.Audiences
}

func (a inboxAccess) Fence(ctx context.Context) (scope.Fence, error) { return a.sims.Fence(ctx) }

func (a inboxAccess) Workarea(ctx context.Context, ref string) (inbox.Workarea, error) {
	w, err := a.m.Effective(ctx, ref)
	return toInboxWorkarea(w), err
}

func (a inboxAccess) WorkareasByIDs(ctx context.Context, ids []string) (map[string]inbox.Workarea, error) {
	ws, err := a.m.EffectiveByIDs(ctx, ids)
	out := make(map[string]inbox.Workarea, len(ws))
	for id, w := range ws {
		out[id] = toInboxWorkarea(w)
	}
	return out, err
}

func toInboxWorkarea(w access.Workarea) inbox.Workarea {
	return inbox.Workarea{ID: w.ID, IDPath: w.IDPath, Status: w.Status,
		Reader: slices.Contains(w.Scopes, string(scope.Reader)), Writer: slices.Contains(w.Scopes, string(scope.Writer)),
		Admin: slices.Contains(w.Scopes, string(scope.Admin))}
}

// sessionsAccess adapts the access context to the sessions context's
// Access port.
type sessionsAccess struct{ m *access.Module }

func (a sessionsAccess) Workarea(ctx context.Context, ref string) (sessions.Workarea, error) {
	w, err := a.m.Effective(ctx, ref)
	return sessions.Workarea{ID: w.ID, IDPath: w.IDPath, Reader: slices.Contains(w.Scopes, string(scope.Reader)),
		Writer: slices.Contains(w.Scopes, string(scope.Writer)), Admin: slices.Contains(w.Scopes, string(scope.Admin))}, err
}

func (a sessionsAccess) Subtrees(ctx context.Context, s scope.Scope) (scope.Subtrees, error) {
	return a.m.Subtrees(ctx, s)
}

func (a sessionsAccess) KeyAt(ctx context.Context, keyID, workareaID string) (sessions.KeyAt, error) {
	k, err := a.m.KeyAt(ctx, keyID, workareaID)
	return sessions.KeyAt{KeyID: k.KeyID, PrincipalID: k.PrincipalID, Principal: k.Principal, Role: k.Role,
		Writer: slices.Contains(k.Scopes, string(scope.Writer))}, err
}

// accessPort adapts the access context to admission's Access port.
type accessPort struct {
	m    *access.Module
	sims audit.Audiences
}

func (a accessPort) Fence(ctx context.Context) (scope.Fence, error) { return a.sims.Fence(ctx) }

func (a accessPort) Simulation(ctx context.Context, id string) (string, error) {
	w, err := a.sims.Writable(ctx, id)
	return w.WorkareaIDPath, err
}

func (a accessPort) Subtrees(ctx context.Context, s scope.Scope) (scope.Subtrees, error) {
	return a.m.Subtrees(ctx, s)
}

func (a accessPort) Workarea(ctx context.Context, ref string) (admission.Workarea, error) {
	w, err := a.m.Effective(ctx, ref)
	if err != nil {
		return admission.Workarea{}, err
	}
	return toAdmissionWorkarea(w), nil
}

func (a accessPort) WorkareasByIDs(ctx context.Context, ids []string) (map[string]admission.Workarea, error) {
	ws, err := a.m.EffectiveByIDs(ctx, ids)
	out := make(map[string]admission.Workarea, len(ws))
	for id, w := range ws {
		out[id] = toAdmissionWorkarea(w)
	}
	return out, err
}

func toAdmissionWorkarea(w access.Workarea) admission.Workarea {
	return admission.Workarea{
		ID: w.ID, Path: w.Path, IDPath: w.IDPath, Status: w.Status, Root: w.Root,
		Reader: slices.Contains(w.Scopes, string(scope.Reader)), Writer: slices.Contains(w.Scopes, string(scope.Writer)),
		Admin: slices.Contains(w.Scopes, string(scope.Admin)),
	}
}

func (a accessPort) WorkareaByID(ctx context.Context, id string) (admission.Workarea, error) {
	return a.Workarea(ctx, id)
}

func (a accessPort) Banned(ctx context.Context) (bool, string, error) { return a.m.Banned(ctx) }

// lineageAccess adapts the access context to lineage's Access port.
type lineageAccess struct{ m *access.Module }

func (a lineageAccess) Subtrees(ctx context.Context, s scope.Scope) (scope.Subtrees, error) {
	return a.m.Subtrees(ctx, s)
}

func (a lineageAccess) Workarea(ctx context.Context, ref string) (lineage.Workarea, error) {
	w, err := a.m.Effective(ctx, ref)
	if err != nil {
		return lineage.Workarea{}, err
	}
	return lineage.Workarea{ID: w.ID, IDPath: w.IDPath, Status: w.Status,
		Reader: slices.Contains(w.Scopes, string(scope.Reader)), Propose: slices.Contains(w.Scopes, string(scope.DreamerPropose))}, nil
}

// lineagePort adapts the lineage context to admission's Lineage port.
type lineagePort struct{ m *lineage.Module }

func (l lineagePort) Declare(ctx context.Context, tenant, artifact string, targets []string, at time.Time) error {
	return l.m.Declare(ctx, tenant, artifact, targets, at)
}

func (l lineagePort) Closures(ctx context.Context, tenant string, artifacts []string, limit int) (map[string][]string, map[string]error, error) {
	return l.m.Closures(ctx, tenant, artifacts, limit)
}

func (l lineagePort) Parents(ctx context.Context, tenant, artifact string) ([]string, error) {
	return l.m.Parents(ctx, tenant, artifact)
}

func (l lineagePort) NextEdge(ctx context.Context, tenant, principal string, within admission.Subtrees, skip []string, now, leaseUntil time.Time) (admission.Edge, bool, error) {
	e, ok, err := l.m.NextForReview(ctx, tenant, principal, lineage.Subtrees(within), skip, now, leaseUntil)
	return toAdmissionEdge(e), ok, err
}

func (l lineagePort) DecideEdge(ctx context.Context, tenant, edgeID string, approve bool, byKey string, within admission.Subtrees) (admission.Edge, error) {
	e, err := l.m.Decide(ctx, tenant, edgeID, approve, byKey, lineage.Subtrees(within))
	return toAdmissionEdge(e), err
}

func (l lineagePort) ServedEdge(ctx context.Context, tenant, edgeID string, within admission.Subtrees) (admission.Edge, error) {
	e, err := l.m.ServedEdge(ctx, tenant, edgeID, lineage.Subtrees(within))
	return toAdmissionEdge(e), err
}

func (l lineagePort) ReleaseEdge(ctx context.Context, tenant, edgeID string, lease time.Time) error {
	return l.m.ReleaseEdge(ctx, tenant, edgeID, lease)
}

func (l lineagePort) EdgeQueue(ctx context.Context, tenant, principal string, within admission.Subtrees, now time.Time) ([]admission.QueueCount, error) {
	counts, err := l.m.QueueCounts(ctx, tenant, principal, lineage.Subtrees(within), now)
	out := make([]admission.QueueCount, len(counts))
	for i, c := range counts {
		out[i] = admission.QueueCount(c)
	}
	return out, err
}

func toAdmissionEdge(e lineage.Edge) admission.Edge {
	return admission.Edge{ID: e.ID, Kind: string(e.Kind), Label: e.Label, From: e.From, To: e.To, Note: e.Note,
		State: string(e.State), ProposedAt: e.ProposedAt}
}

// readLogPort adapts the retrieval context's read log to lineage's Reads
// port.
type readLogPort struct{ m *retrieval.Module }

func (r readLogPort) GraphRead(ctx context.Context, g lineage.GraphRead) error {
	return r.m.LogRead(ctx, retrieval.ReadLog{
		Operation: retrieval.ReadGraph, TenantID: g.TenantID, KeyID: g.KeyID, WorkareaID: g.WorkareaID,
		QuerySHA256: g.QuerySHA256, Returned: g.Returned, Simulations: g.Simulations, At: g.At,
	})
}

// claimsPort adapts the admission context to lineage's Claims port.
type claimsPort struct{ m *admission.Module }

func (c *claimsPort) Lookup(ctx context.Context, ids []string) (map[string]lineage.ClaimRef, error) {
	views, err := c.m.View(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]lineage.ClaimRef, len(views))
	for id, v := range views {
		r := toClaimRef(v.Claim)
		switch v.Visibility {
		case admission.Readable:
			r.Visibility = lineage.Readable
		case admission.BodyLess:
			r.Visibility = lineage.BodyLess
		default:
			r.Visibility = lineage.Absent
		}
		out[id] = r
	}
	return out, nil
}

func (c *claimsPort) Recent(ctx context.Context, idPath string, limit int) ([]lineage.ClaimRef, error) {
	claims, err := c.m.RecentReadable(ctx, idPath, limit)
	out := make([]lineage.ClaimRef, len(claims))
	for i, cl := range claims {
		out[i] = toClaimRef(cl)
		out[i].Visibility = lineage.Readable
	}
	return out, err
}

func toClaimRef(c admission.Claim) lineage.ClaimRef {
	return lineage.ClaimRef{ID: c.ID, ClaimKey: c.ClaimKey, Version: admission.ShownVersion(c), Kind: string(c.Kind), State: string(c.State),
		WorkareaID: c.WorkareaID, WorkareaIDPath: c.WorkareaIDPath, Supersedes: c.Supersedes, SimulationID: c.SimulationID}
}

// edgesPort adapts the lineage context to access's Edges port.
type edgesPort struct{ m *lineage.Module }

func (e *edgesPort) From(ctx context.Context, tenant, workarea string) ([]access.WorkareaEdge, error) {
	edges, err := e.m.WorkareaEdges(ctx, tenant, workarea)
	out := make([]access.WorkareaEdge, len(edges))
	for i, x := range edges {
		out[i] = access.WorkareaEdge{Label: x.Label, To: x.To, ToIDPath: x.ToIDPath, State: string(x.State)}
	}
	return out, err
}

// uploadsPort adapts the attachments context to admission's Uploads port.
type uploadsPort struct{ m *attachments.Module }

func (u uploadsPort) Bind(ctx context.Context, tenant, keyID, artifact string, sessions []string) ([]admission.Attachment, error) {
	bound, err := u.m.Bind(ctx, tenant, keyID, artifact, sessions)
	out := make([]admission.Attachment, len(bound))
	for i, a := range bound {
		out[i] = admission.Attachment{SHA256: a.SHA256, MediaType: a.MediaType, SizeBytes: a.Size}
	}
	return out, err
}

func (u uploadsPort) Release(ctx context.Context, tenant, actor, artifact string) error {
	return u.m.Release(ctx, tenant, actor, artifact)
}

func (u uploadsPort) Review(ctx context.Context, tenant, artifact string) ([]admission.ReviewMaterial, error) {
	material, err := u.m.Review(ctx, tenant, artifact)
	out := make([]admission.ReviewMaterial, len(material))
	for i, m := range material {
		out[i] = admission.ReviewMaterial{
			Attachment: admission.Attachment{SHA256: m.SHA256, MediaType: m.MediaType, SizeBytes: m.Size},
			Kind:       m.Kind, Text: m.Text, Truncated: m.Truncated, Note: m.Note,
			UploadSession: m.UploadSession, UploadedBy: m.UploadedBy, CompletedAt: m.CompletedAt,
		}
	}
	return out, err
}

// attachmentsAccess adapts the access context to attachments' Access port.
type attachmentsAccess struct{ m *access.Module }

func (a attachmentsAccess) Writes(ctx context.Context) (bool, error) {
	writable, err := a.m.Subtrees(ctx, scope.Writer)
	return !writable.Empty(), err
}

func (a attachmentsAccess) AdministersTenant(ctx context.Context) error {
	return a.m.AdministersTenant(ctx)
}

// readablePort adapts the admission context to attachments' Claims port;
// it binds to admission once admission exists.
type readablePort struct{ m *admission.Module }

func (r *readablePort) CanRead(ctx context.Context, artifact string) (bool, error) {
	return r.m.CanReadContent(ctx, artifact)
}

// indexPort adapts the retrieval context to admission's Index port.
type indexPort struct{ m *retrieval.Module }

func (x indexPort) Prepare(ctx context.Context, text string) (admission.Prepared, error) {
	return x.m.Prepare(ctx, text)
}

func (x indexPort) Stage(ctx context.Context, tenant, artifact string, p admission.Prepared) error {
	prep, _ := p.(retrieval.Prepared)
	return x.m.Stage(ctx, tenant, artifact, prep)
}

func (x indexPort) Promoted(ctx context.Context, c admission.Claim) error {
	e := retrieval.Entry{
		TenantID: c.TenantID, ArtifactID: c.ID, WorkareaID: c.WorkareaID, WorkareaIDPath: c.WorkareaIDPath,
		Kind: string(c.Kind), ClaimKey: c.ClaimKey, Version: admission.ShownVersion(c), Text: c.Text, SimulationID: c.SimulationID,
	}
	if c.PromotedAt != nil {
		e.PromotedAt = *c.PromotedAt
	}
	for _, a := range c.Attachments {
		e.Attachments = append(e.Attachments, retrieval.Attachment(a))
	}
	return x.m.Promoted(ctx, e)
}

func (x indexPort) Withdrawn(ctx context.Context, tenant, artifact string) error {
	return x.m.Withdrawn(ctx, tenant, artifact)
}

// retrievalAccess adapts the access context to retrieval's Access port.
type retrievalAccess struct {
	m    *access.Module
	sims audit.Audiences
}

func (a retrievalAccess) Fence(ctx context.Context) (scope.Fence, error) { return a.sims.Fence(ctx) }

func (a retrievalAccess) Subtrees(ctx context.Context, s scope.Scope) (scope.Subtrees, error) {
	return a.m.Subtrees(ctx, s)
}

func (a retrievalAccess) Workarea(ctx context.Context, ref string) (retrieval.Workarea, error) {
	w, err := a.m.Effective(ctx, ref)
	return retrieval.Workarea{ID: w.ID, IDPath: w.IDPath, Reader: slices.Contains(w.Scopes, string(scope.Reader)),
		Admin: slices.Contains(w.Scopes, string(scope.Admin))}, err
}

func (a retrievalAccess) AdministersTenant(ctx context.Context) error {
	return a.m.AdministersTenant(ctx)
}

func (a retrievalAccess) Paths(ctx context.Context, ids []string) (map[string]string, error) {
	return a.m.Paths(ctx, ids)
}

// pdfSandbox parses PDFs in a child process of this binary (its hidden
// extract-pdf command); without a path to the binary, nil parses in
// process, and the log says so.
func pdfSandbox(log *slog.Logger) attachments.PDFSandbox {
	exe, err := os.Executable()
	if err != nil {
		log.Warn("PDF review material is parsed in process: the server's binary was not found", "error", err)
		return nil
	}
	return logFailures(attachments.SubprocessPDF(nil, exe, pdfChildCommand), log)
}

// logFailures logs a sandbox child's failure (its exit status and
// stderr); the reviewer's material says only that the parser stopped.
func logFailures[M any](sandbox func(context.Context, []byte) (M, error), log *slog.Logger) func(context.Context, []byte) (M, error) {
	return func(ctx context.Context, pdf []byte) (M, error) {
		m, err := sandbox(ctx, pdf)
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "PDF sandbox: the child failed", "error", err)
		}
		return m, err
	}
}

// readiness is /readyz: false while the replica drains, while the
// database does not answer or its schema is not this binary's, and while
// the blob store does not answer. When the schema catches up after the
// server started (migrate ran later), the pool is reset once so every
// connection registers the types the migrations created (pgvector's).
type readiness struct {
	db       *pg.DB
	runner   *migrate.Runner
	store    attachments.Store
	draining atomic.Bool
	behind   atomic.Bool
	// The last probe of the dependencies and when it ran: probes within
	// readyFor of it share its answer (and wait for a running one), so a
	// flood of anonymous /readyz calls costs the database and the store
	// one probe a second.
	mu   sync.Mutex
	at   time.Time
	last error
}

const readyFor = time.Second

func (r *readiness) check(ctx context.Context) error {
	if r.draining.Load() {
		return errs.Retry(errs.Unavailable, "readiness: a draining replica takes no new traffic", 5*time.Second, "the replica is shutting down")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.IsZero() && time.Since(r.at) < readyFor {
		return r.last
	}
	r.last = r.probe(ctx)
	r.at = time.Now()
	return r.last
}

func (r *readiness) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := r.db.Pool.Ping(ctx); err != nil {
		return errs.Retry(errs.Unavailable, "readiness: the database must answer", 5*time.Second, "database unreachable")
	}
	v, err := r.runner.Current(ctx)
	if err != nil {
		return errs.Retry(errs.Unavailable, "readiness: the schema version must be readable", 5*time.Second, "schema version unreadable")
	}
	if v != r.runner.Latest() {
		r.behind.Store(true)
		return errs.Retry(errs.Unavailable, "readiness: migrations must be current (oml-server migrate)", 5*time.Second,
			"database schema is at version %d, this binary needs %d", v, r.runner.Latest())
	}
	if r.behind.CompareAndSwap(true, false) {
		r.db.Pool.Reset()
	}
	if r.store != nil {
		if err := attachments.Ping(ctx, r.store); err != nil {
			return errs.Retry(errs.Unavailable, "readiness: the blob store must answer", 5*time.Second, "blob store unreachable")
		}
	}
	return nil
}

func newLogger(cfg config.Config, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(transport.LogHandler(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(transport.LogHandler(slog.NewTextHandler(w, opts)))
}

// embedderConfig selects the embedder from the configuration.
func embedderConfig(cfg config.Config) retrieval.EmbedderConfig {
	return retrieval.EmbedderConfig{URL: cfg.EmbeddingsURL, Model: cfg.EmbeddingsModel, Dim: cfg.EmbeddingsDim, APIKey: cfg.EmbeddingsAPIKey}
}

func openDB(ctx context.Context, cfg config.Config) (*pg.DB, error) {
	if err := cfg.RequireDatabase(); err != nil {
		return nil, err
	}
	db, err := pg.Open(ctx, cfg.DatabaseURL, pg.Options{MaxConns: cfg.DBMaxConns, ApplicationName: "oml-server"})
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return db, nil
}
