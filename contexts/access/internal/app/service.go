package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/expiring"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

// Service is the access context's application service.
type Service struct {
	repo    Repository
	journal Journal
	tx      Transactor
	edges   Edges
	now     func() time.Time
	// limiter, when made, forgets a tenant's cached quotas when they
	// change here.
	limiter *Limiter
	// paths remembers workareas' paths by tenant and id (Paths). Nothing
	// changes a workarea's path once it is created, so a remembered one
	// is never wrong; the bound and expiry only cap the memory.
	paths *expiring.Map[string, string]
}

// pathsKept is how long and how many workarea paths Paths remembers.
const (
	pathsTTL  = 10 * time.Minute
	pathsKept = 50_000
)

// WithEdges lets workarea reads show edges from the lineage context.
func (s *Service) WithEdges(e Edges) *Service {
	s.edges = e
	return s
}

// New returns a service. now may be nil (time.Now).
func New(repo Repository, j Journal, tx Transactor, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{repo: repo, journal: j, tx: tx, now: now, paths: expiring.New[string, string](pathsTTL, pathsKept)}
}

// Rules named in refusals.
const (
	ruleEffective = "effective access (D7); unknown and out-of-scope are indistinguishable"
	ruleAdmin     = "admin verbs need admin effective access on the node (D7)"
	ruleOperator  = "operator never writes, reads or reviews content (D9)"
)

// notFound is the one refusal for unknown and unreadable workareas. It
// never echoes the id, so every such answer is byte-identical.
func notFound() error {
	return errs.New(errs.NotFound, ruleEffective, "no readable workarea with that reference for this key")
}

func caller(ctx context.Context) (auth.Caller, error) { return auth.Required(ctx) }

// view is one caller's access, read in one snapshot.
type view struct {
	caller auth.Caller
	role   domain.Role
	access Access
}

func (s *Service) viewOf(ctx context.Context) (view, error) {
	c, err := caller(ctx)
	if err != nil {
		return view{}, err
	}
	a, err := s.repo.AccessOf(ctx, c.TenantID, c.KeyID)
	if err != nil {
		return view{}, fmt.Errorf("load access: %w", err)
	}
	return view{caller: c, role: domain.Role(c.Role), access: a}, nil
}

// viewKey names the caller's view in the request's memo.
type viewKey struct{}

// readView is viewOf loaded once per request: the reads other contexts
// make through their ports (a serve asks about many workarea, a recall
// about its scope and the readable subtrees) share one snapshot of the
// caller's grants. Admin verbs use viewOf, which always reads anew.
func (s *Service) readView(ctx context.Context) (view, error) {
	return auth.Memo(ctx, viewKey{}, func() (view, error) { return s.viewOf(ctx) })
}

// readViewAt is readView and the workarea ref names (resolve's refusals):
// when the view is not loaded yet, both come from one statement.
func (s *Service) readViewAt(ctx context.Context, ref string) (view, domain.Workarea, error) {
	var byID, byPath string
	switch {
	case ids.Has(ids.Workarea, ref):
		byID = ref
	case ref != "" && len(ref) <= 1024:
		byPath = ref
	default:
		v, err := s.readView(ctx)
		if err != nil {
			return view{}, domain.Workarea{}, err
		}
		return v, domain.Workarea{}, notFound()
	}
	var w domain.Workarea
	var loaded, found bool
	v, err := auth.Memo(ctx, viewKey{}, func() (view, error) {
		c, err := caller(ctx)
		if err != nil {
			return view{}, err
		}
		a, at, ok, err := s.repo.AccessAt(ctx, c.TenantID, c.KeyID, byID, byPath)
		if err != nil {
			return view{}, fmt.Errorf("load access: %w", err)
		}
		w, loaded, found = at, true, ok
		return view{caller: c, role: domain.Role(c.Role), access: a}, nil
	})
	switch {
	case err != nil:
		return view{}, domain.Workarea{}, err
	case !loaded: // the view was read before: the workarea alone
		w, err = s.resolve(ctx, v.caller.TenantID, ref)
		return v, w, err
	case !found:
		return v, domain.Workarea{}, notFound()
	}
	return v, w, nil
}

// at is the caller's effective access at w. A key revoked since it
// authenticated holds nothing.
func (v view) at(w domain.Workarea) domain.Scope {
	return v.atPath(w.IDPath)
}

func (v view) atPath(idPath string) domain.Scope {
	return domain.Effective(v.role, v.access.Revoked, v.access.Grants, idPath)
}

// Locate finds a tenant's workarea by id or path, for operator commands
// that run with the database's credentials, not a key's (oml-server
// subtree-index): no access check, so never on a request's path.
func (s *Service) Locate(ctx context.Context, tenant, ref string) (domain.Workarea, error) {
	w, err := s.resolve(ctx, tenant, ref)
	if errs.Is(err, errs.NotFound) {
		return w, errs.New(errs.NotFound, "a workarea is named by its id or path within its tenant",
			"tenant %q has no workarea %q", tenant, ref)
	}
	return w, err
}

// resolve finds a workarea by id or path within the caller's tenant.
func (s *Service) resolve(ctx context.Context, tenant, ref string) (domain.Workarea, error) {
	var w domain.Workarea
	var err error
	switch {
	case !storable(tenant) || !storable(ref):
		// Postgres refuses a NUL or invalid UTF-8 in text outright; no
		// workarea is named so.
		return w, notFound()
	case ids.Has(ids.Workarea, ref):
		w, err = s.repo.WorkareaGet(ctx, tenant, ref)
	case ref != "" && len(ref) <= 1024:
		w, err = s.repo.WorkareaByPath(ctx, tenant, ref)
	default:
		return w, notFound()
	}
	if errors.Is(err, ErrNotFound) {
		return w, notFound()
	}
	if err != nil {
		return w, fmt.Errorf("load workarea: %w", err)
	}
	return w, nil
}

// storable says Postgres can hold s as text: valid UTF-8 without NUL.
func storable(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// visible resolves ref and checks the caller holds want there. A node
// where the caller holds nothing at all is reported as nonexistent; one it
// can see but lacks want on is denied.
func (s *Service) visible(ctx context.Context, v view, ref string, want domain.Scope) (domain.Workarea, domain.Scope, error) {
	w, err := s.resolve(ctx, v.caller.TenantID, ref)
	if err != nil {
		return w, 0, err
	}
	have := v.at(w)
	switch {
	case have.Has(want):
		return w, have, nil
	case want == domain.ScopeReader || have == 0:
		return w, have, notFound()
	case want == domain.ScopeAdmin:
		return w, have, errs.New(errs.Denied, ruleAdmin, "this key has no admin access on workarea %s", w.ID)
	}
	return w, have, errs.New(errs.Denied, ruleEffective, "this key lacks %s access on workarea %s", want, w.ID)
}

// AdministersTenant refuses, with the typed error, a caller that may not
// use tenant-level admin verbs (an admin key with admin access on
// universe); other contexts ask it before their own tenant settings.
func (s *Service) AdministersTenant(ctx context.Context) error {
	_, _, err := s.adminAtRoot(ctx)
	return err
}

// adminAtRoot checks tenant-level admin verbs (keys, journal).
func (s *Service) adminAtRoot(ctx context.Context) (view, domain.Workarea, error) {
	v, err := s.viewOf(ctx)
	if err != nil {
		return v, domain.Workarea{}, err
	}
	if v.role != domain.RoleAdmin && v.role != domain.RoleOperator {
		return v, domain.Workarea{}, errs.New(errs.VerbCeiling, "role ceiling: tenant administration needs an admin or operator key",
			"a %s key cannot administer keys or the journal", v.role)
	}
	root, err := s.repo.WorkareaByPath(ctx, v.caller.TenantID, domain.RootName)
	if err != nil {
		return v, root, fmt.Errorf("load universe: %w", err)
	}
	if !v.at(root).Has(domain.ScopeAdmin) {
		return v, root, errs.New(errs.Denied, ruleAdmin, "tenant administration needs admin access on universe")
	}
	return v, root, nil
}

func (s *Service) record(ctx context.Context, tenant string, e journal.Event) error {
	if _, err := s.journal.Append(ctx, tenant, e); err != nil {
		return fmt.Errorf("journal %s: %w", e.Type, err)
	}
	return nil
}
