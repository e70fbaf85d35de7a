// Package audit is the audit context: the evidence export (GET
// /v1/evidence). It owns no table: it reads the journal, and the access
// and admission contexts through ports, in one snapshot, and signs what it
// read with the deployment's key (see package evidence for the file and
// its offline check); and simulations (D10): their records and audiences,
// in its own schema (audit).
package audit

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/audit/evidence"
	"github.com/omlhub/oml/contexts/audit/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/scope"
	"github.com/omlhub/oml/platform/transport"
)

// Subtree is a workarea the caller administers and the ids of its
// subtree where it holds admin and reader now; Tenant says it also
// administers the tenant.
type Subtree struct {
	ID, Path, IDPath string
	IDs              []string
	Tenant           bool
}

// Access is the access context as the audit context needs it.
type Access interface {
	// AdminSubtree resolves a workarea the caller administers (else the
	// typed refusal) and lists its subtree, at most max (else
	// limit.ceiling).
	AdminSubtree(ctx context.Context, ref string, max int) (Subtree, error)
	// AdminOn resolves a workarea the caller (admin or operator) holds
	// admin on and returns its id.
	AdminOn(ctx context.Context, ref string) (id, idPath string, err error)
	// KeyInTenant is access.not_found unless keyID is a key of the
	// caller's tenant.
	KeyInTenant(ctx context.Context, keyID string) error
	// AdministersTenant is nil for an admin or operator on universe.
	AdministersTenant(ctx context.Context) error
}

// Claim and Serve are the admission context's records.
type (
	Claim = evidence.Submission
	Serve = evidence.Serve
)

// Admission is the admission context as the export needs it.
type Admission interface {
	// Evidence reads the claims submitted and the serves made in the
	// workareas ids in [from, to], up to limit+1 of each.
	Evidence(ctx context.Context, tenant string, workareas []string, fence scope.Fence, from, to time.Time, limit int) ([]Claim, []Serve, error)
}

// Deps are what the context needs.
type Deps struct {
	// Tx runs units of work and snapshots; the simulations' tables are
	// the context's own (schema audit).
	Tx        *pg.DB
	Journal   *journal.Journal
	Access    Access
	Admission Admission
	Signer    ed25519.PrivateKey
	// ReciprocalRate flags a pair of principals who each gave at least
	// this share of their approvals to the other.
	ReciprocalRate float64
	Now            func() time.Time
}

// The export's bounds: a larger subtree or range is refused, never cut.
// Records hold no text (an envelope binds the text's SHA-256), so a file
// stays within a few hundred MiB.
const (
	MaxWorkareas = 10_000
	MaxRecords   = 100_000
	MaxEvents    = 500_000
)

// Module is the audit context, ready to mount.
type Module struct {
	d    Deps
	q    *dbsqlc.Queries
	sims Audiences
}

// New assembles the context.
func New(d Deps) *Module {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.ReciprocalRate <= 0 {
		d.ReciprocalRate = 0.5
	}
	return &Module{d: d, q: dbsqlc.New(), sims: NewAudiences(d.Tx)}
}

// Routes registers GET /v1/evidence and the simulations' routes.
func (m *Module) Routes(r chi.Router) {
	r.Get("/evidence", transport.Handler(m.export))
	m.simulationRoutes(r)
}

// Tools registers nothing: the export and simulations are HTTP verbs of
// admins and operators (R1).
func (m *Module) Tools(*transport.Tools) {}

// Query is one export's scope.
type Query struct {
	Workarea string
	From, To time.Time
}

// tenantLevel are the event families that name no workarea and belong to
// any subtree's evidence: keys, bans and quotas.
var tenantLevel = []string{"key.", "ban.", "quota."}

// Export builds and signs the evidence file for an admin of q.Workarea.
func (m *Module) Export(ctx context.Context, q Query) (*evidence.File, error) {
	c, err := auth.ContentCaller(ctx, "evidence export")
	if err != nil {
		return nil, err
	}
	if q.Workarea == "" {
		return nil, errs.Invalid("workarea is required (an id or a path)")
	}
	if q.To.IsZero() {
		q.To = m.d.Now()
	}
	if q.To.Before(q.From) {
		return nil, errs.Invalid("from %s is after to %s", q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
	}
	f := &evidence.File{Submissions: []evidence.Submission{}, Serves: []evidence.Serve{}, Journal: []evidence.Event{}}
	// The exporter's own fence (D10): a simulation's rows and events are
	// in the file only for a member of its audience; for anyone else its
	// events are links without content, like those outside the subtree.
	fence, err := m.sims.Fence(ctx)
	if err != nil {
		return nil, err
	}
	err = m.d.Tx.InSnapshot(ctx, func(ctx context.Context) error {
		sub, err := m.d.Access.AdminSubtree(ctx, q.Workarea, MaxWorkareas)
		if err != nil {
			return err
		}
		in := make(map[string]bool, len(sub.IDs))
		for _, id := range sub.IDs {
			in[id] = true
		}
		f.Manifest = evidence.Manifest{TenantID: c.TenantID, Workarea: evidence.Workarea{ID: sub.ID, Path: sub.Path},
			From: q.From.UTC(), To: q.To.UTC(), GeneratedAt: m.d.Now().UTC()}
		headSeq, headHash, err := m.d.Journal.HeadLink(ctx, c.TenantID)
		if err != nil {
			return err
		}
		f.Manifest.Journal.HeadSeq, f.Manifest.Journal.HeadHash = headSeq, hex.EncodeToString(headHash)
		if err := m.segment(ctx, c.TenantID, q, in, sub.Tenant, fence, f); err != nil {
			return err
		}
		claims, serves, err := m.d.Admission.Evidence(ctx, c.TenantID, sub.IDs, fence, q.From, q.To, MaxRecords)
		if err != nil {
			return err
		}
		if len(claims) > MaxRecords || len(serves) > MaxRecords {
			return errs.New(errs.LimitCeiling, fmt.Sprintf("an evidence export holds at most %d submissions and %d serves", MaxRecords, MaxRecords),
				"the range holds more; export a shorter range or a smaller subtree")
		}
		f.Submissions, f.Serves = append(f.Submissions, claims...), append(f.Serves, serves...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.Reciprocal = evidence.ReciprocalOf(f.Serves, m.d.ReciprocalRate)
	if err := f.Seal(m.d.Signer); err != nil {
		return nil, fmt.Errorf("seal the evidence: %w", err)
	}
	return f, nil
}

// segment reads the tenant's journal events in the range, whole inside
// the subtree (and, for a tenant administrator, keys, bans and quotas),
// reduced to their links elsewhere.
func (m *Module) segment(ctx context.Context, tenant string, q Query, in map[string]bool, tenantAdmin bool, fence scope.Fence, f *evidence.File) error {
	first, last, err := m.d.Journal.SeqRange(ctx, tenant, q.From, q.To)
	if err != nil || first == 0 {
		f.Manifest.Journal.PrevHash = hex.EncodeToString(journal.Genesis())
		return err
	}
	if last-first+1 > MaxEvents {
		return errs.New(errs.LimitCeiling, fmt.Sprintf("an evidence export holds at most %d journal events", MaxEvents),
			"the range holds %d; export a shorter range", last-first+1)
	}
	f.Manifest.Journal.FromSeq, f.Manifest.Journal.ToSeq = first, last
	for after := first - 1; after < last; {
		batch, err := m.d.Journal.After(ctx, tenant, after, 1000)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			return fmt.Errorf("journal: the segment ends at %d before %d", after, last)
		}
		for _, e := range batch {
			if e.Seq > last {
				break
			}
			if e.Seq != after+1 {
				return fmt.Errorf("journal: seq %d follows %d: the chain has a gap (run oml admin journal verify)", e.Seq, after)
			}
			if e.Seq == first {
				f.Manifest.Journal.PrevHash = hex.EncodeToString(e.PrevHash)
			}
			ev := evidence.Event{Seq: e.Seq, PrevHash: hex.EncodeToString(e.PrevHash), Hash: hex.EncodeToString(e.Hash)}
			whole := in[e.Workarea] || (tenantAdmin && e.Workarea == "" && slices.ContainsFunc(tenantLevel, func(p string) bool { return strings.HasPrefix(e.Type, p) }))
			if whole && fence.Admits(e.Simulation()) {
				at := e.At.UTC()
				ev.EventID, ev.Type, ev.At, ev.Actor, ev.Workarea, ev.Subject, ev.Payload = e.ID, e.Type, &at, e.Actor, e.Workarea, e.Subject, e.Payload
			} else {
				ev.Redacted = true
			}
			f.Journal = append(f.Journal, ev)
			f.Manifest.Journal.LastHash = ev.Hash
			after = e.Seq
		}
	}
	return nil
}

// export is GET /v1/evidence?workarea=&from=&to=: the file itself.
func (m *Module) export(w http.ResponseWriter, r *http.Request) error {
	transport.ExtendDeadlines(w, transport.StreamTimeout, transport.StreamTimeout)
	params, err := transport.Query(r, "workarea", "from", "to")
	if err != nil {
		return err
	}
	q := Query{Workarea: params["workarea"]}
	for name, dst := range map[string]*time.Time{"from": &q.From, "to": &q.To} {
		if v := params[name]; v != "" {
			if *dst, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return errs.Invalid("%s: want an RFC 3339 time such as 2026-12-01T00:00:00Z, got %q", name, v)
			}
		}
	}
	f, err := m.Export(r.Context(), q)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="oml-evidence-%s.json"`, f.Manifest.Workarea.ID))
	w.Header().Set("Cache-Control", "no-store")
	transport.WriteJSON(w, http.StatusOK, f)
	return nil
}

// PublicKey is the key an evidence file is verified with.
func (m *Module) PublicKey() string {
	return base64.StdEncoding.EncodeToString(m.d.Signer.Public().(ed25519.PublicKey))
}
