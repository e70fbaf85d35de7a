package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omlhub/oml/contexts/documents/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
)

// Deps are the service's ports.
type Deps struct {
	Access    Access
	Admission Admission
	Repo      Repository
	Tx        Transactor
	// PublicURL is where the viewer serves documents (/d/{id}).
	PublicURL string
	Now       func() time.Time
}

// Service is the documents context's application service.
type Service struct {
	Deps
	guard *guard
}

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{Deps: d, guard: newGuard()}
}

const (
	ruleReach   = "a document is reached through its workarea's read access, and only once a version of it is promoted (or by its author); a missing one and an unreachable one answer alike"
	ruleWrite   = "publishing, updating and commenting need writer access on the document's workarea (D7)"
	ruleComment = "resolving or deleting a comment needs its delete token or writer access on the document's workarea"
)

func notFound() error {
	return errs.New(errs.NotFound, ruleReach, "no document with that id for this key")
}

// View is a document as a caller reads it.
type View struct {
	Document     domain.Document
	WorkareaPath string
	// Version is the promoted head, or (for its author, before any
	// promotion) the newest held version.
	Version domain.Version
	OwnHeld []domain.Version
	Counts  Counts
	// ViewerURL is where the document is read in a browser: the promoted
	// version, or the caller's draft (DraftURL) when it has one.
	ViewerURL string
	DraftURL  string
}

// Publish is an artifact_publish.
type Publish struct {
	Workarea    string
	Format      string
	Content     string
	Visibility  string
	Password    string
	SessionID   string
	Meta        domain.Meta
	BaseVersion string
}

// Publish creates a document with its first version, held until an
// identity that did not write it approves it (R3). The creator is the
// caller (seed 002's actor), whatever the input says.
func (s *Service) Publish(ctx context.Context, p Publish) (View, error) {
	c, err := auth.ContentCaller(ctx, "documents")
	if err != nil {
		return View{}, err
	}
	if p.Visibility == "" {
		p.Visibility = domain.Workarea
	}
	if err := domain.CheckFormat(p.Format); err != nil {
		return View{}, err
	}
	if err := domain.CheckVisibility(p.Visibility, p.Password); err != nil {
		return View{}, err
	}
	if err := domain.CheckContent(p.Content); err != nil {
		return View{}, err
	}
	if err := domain.CheckMeta(p.Format, p.Content, &p.Meta); err != nil {
		return View{}, err
	}
	if p.SessionID != "" && !ids.Has(ids.Session, p.SessionID) {
		return View{}, errs.Invalid("session_id: not a session id")
	}
	w, err := s.writable(ctx, p.Workarea)
	if err != nil {
		return View{}, err
	}
	d := domain.Document{TenantID: c.TenantID, ID: ids.New(ids.Document), WorkareaID: w.ID, WorkareaIDPath: w.IDPath,
		Format: p.Format, Visibility: p.Visibility, ActorPrincipal: c.PrincipalID, ActorKeyID: c.KeyID, SessionID: p.SessionID,
		CreatedAt: s.Now()}
	if p.Visibility == domain.Password {
		// The key derivation runs before, not inside, the unit of work.
		if d.PasswordSalt, d.PasswordHash, err = domain.HashPassword(p.Password); err != nil {
			return View{}, fmt.Errorf("hash password: %w", err)
		}
	}
	v, err := s.Admission.Submit(ctx, Submission{WorkareaID: w.ID, Key: d.Key(), Content: p.Content, BaseVersion: domain.Absent},
		func(ctx context.Context, v domain.Version) error {
			if err := s.Repo.Insert(ctx, d); err != nil {
				return fmt.Errorf("insert document: %w", err)
			}
			return s.Repo.InsertMeta(ctx, c.TenantID, d.ID, v.ArtifactID, p.Meta, d.CreatedAt)
		})
	if err != nil {
		return View{}, err
	}
	// A held version has no revision yet (its number counts others' versions).
	v.Title, v.Description, v.Label, v.Revision = p.Meta.Title, p.Meta.Description, p.Meta.Label, 0
	return s.view(d, w.Path, v, nil, Counts{}, c.PrincipalID), nil
}

// Update is an artifact_update.
type Update struct {
	ID          string
	Content     string
	BaseVersion string
	Force       bool
	Meta        domain.Meta
}

// Update submits a new version of a document the caller may reach. With
// base_version (the version it was written against) a stale base is
// refused now and again at promotion (knowledge.conflict naming the
// current version) unless force; without it the last version promoted
// wins. A blank title keeps the current one.
func (s *Service) Update(ctx context.Context, u Update) (View, error) {
	if err := domain.CheckContent(u.Content); err != nil {
		return View{}, err
	}
	base := u.BaseVersion
	switch {
	case u.Force:
		base = ""
	case base != "" && (len(base) != 71 || !strings.HasPrefix(base, "sha256:")):
		return View{}, errs.Invalid("base_version: want the sha256:… version a read returned")
	}
	r, err := s.reach(ctx, u.ID)
	if err != nil {
		return View{}, err
	}
	if _, err := s.writable(ctx, r.Document.WorkareaID); err != nil {
		return View{}, err
	}
	// Blank fields keep the current version's.
	meta := u.Meta
	if strings.TrimSpace(meta.Title) == "" {
		meta.Title = r.Version.Title
	}
	if meta.Description == "" {
		meta.Description = r.Version.Description
	}
	if meta.Label == "" {
		meta.Label = r.Version.Label
	}
	if err := domain.CheckMeta(r.Document.Format, u.Content, &meta); err != nil {
		return View{}, err
	}
	c, _ := auth.From(ctx)
	now := s.Now()
	v, err := s.Admission.Submit(ctx, Submission{WorkareaID: r.Document.WorkareaID, Key: r.Document.Key(), Content: u.Content, BaseVersion: base},
		func(ctx context.Context, v domain.Version) error {
			return s.Repo.InsertMeta(ctx, c.TenantID, r.Document.ID, v.ArtifactID, meta, now)
		})
	if err != nil {
		return View{}, err
	}
	v.Title, v.Description, v.Label, v.Revision = meta.Title, meta.Description, meta.Label, 0
	return s.view(r.Document, r.WorkareaPath, v, nil, r.Counts, c.PrincipalID), nil
}

// Draft keeps the caller's live working version of a document (a new
// one, from workarea and format, when id is empty): seen by the caller
// alone at the draft URL, never reviewed or shared; publishing it is
// artifact_publish or artifact_update.
func (s *Service) Draft(ctx context.Context, id string, p Publish) (View, error) {
	c, err := auth.ContentCaller(ctx, "documents")
	if err != nil {
		return View{}, err
	}
	if err := domain.CheckContent(p.Content); err != nil {
		return View{}, err
	}
	now := s.Now()
	if id == "" {
		if err := domain.CheckFormat(p.Format); err != nil {
			return View{}, err
		}
		w, err := s.writable(ctx, p.Workarea)
		if err != nil {
			return View{}, err
		}
		d := domain.Document{TenantID: c.TenantID, ID: ids.New(ids.Document), WorkareaID: w.ID, WorkareaIDPath: w.IDPath,
			Format: p.Format, Visibility: domain.Workarea, ActorPrincipal: c.PrincipalID, ActorKeyID: c.KeyID, CreatedAt: now}
		err = s.Tx.InTx(ctx, func(ctx context.Context) error {
			if err := s.Repo.Insert(ctx, d); err != nil {
				return fmt.Errorf("insert document: %w", err)
			}
			return s.Repo.PutDraft(ctx, c.TenantID, d.ID, c.PrincipalID, p.Content, now)
		})
		if err != nil {
			return View{}, err
		}
		return View{Document: d, WorkareaPath: w.Path, DraftURL: s.url(d.ID) + "/draft"}, nil
	}
	r, err := s.reach(ctx, id)
	if err != nil {
		return View{}, err
	}
	if _, err := s.writable(ctx, r.Document.WorkareaID); err != nil {
		return View{}, err
	}
	if err := s.Repo.PutDraft(ctx, c.TenantID, id, c.PrincipalID, p.Content, now); err != nil {
		return View{}, fmt.Errorf("store draft: %w", err)
	}
	r.DraftURL = s.url(id) + "/draft"
	return r, nil
}

// Get reads a document the caller may reach: the promoted head, or a
// promoted version by its hash; its author before any promotion reads its
// newest held version, marked held.
func (s *Service) Get(ctx context.Context, id, version string) (View, error) {
	r, err := s.reach(ctx, id)
	if err != nil || version == "" || version == r.Version.Version {
		return r, err
	}
	c, _ := auth.From(ctx)
	v, err := s.Admission.ByVersion(ctx, c.TenantID, r.Document.WorkareaID, r.Document.Key(), version)
	if errors.Is(err, ErrNotFound) {
		return View{}, errs.New(errs.NotFound, "artifact_get with version reads a promoted version artifact_versions listed",
			"document %s has no promoted version %s", id, version)
	}
	if err != nil {
		return View{}, fmt.Errorf("read version: %w", err)
	}
	vs, err := s.withMeta(ctx, c.TenantID, []domain.Version{v})
	if err == nil {
		_, err = s.number(ctx, r.Document, vs)
	}
	if err != nil {
		return View{}, err
	}
	r.Version = vs[0]
	return r, nil
}

// Versions lists a document's promoted versions, newest first.
func (s *Service) Versions(ctx context.Context, id string) ([]domain.Version, error) {
	r, err := s.reach(ctx, id)
	if err != nil {
		return nil, err
	}
	c, _ := auth.From(ctx)
	vs, err := s.Admission.Versions(ctx, c.TenantID, r.Document.WorkareaID, r.Document.Key(), []string{domain.StatePromoted}, "", 0, domain.MaxList, false)
	if err != nil {
		return nil, fmt.Errorf("read versions: %w", err)
	}
	if _, err := s.number(ctx, r.Document, vs); err != nil {
		return nil, err
	}
	return s.withMeta(ctx, c.TenantID, vs)
}

// List lists a workarea's documents the caller may reach (optionally one
// session's), in creation order after cursor.
func (s *Service) List(ctx context.Context, workarea, session, cursor string, limit int) ([]View, string, error) {
	c, err := auth.ContentCaller(ctx, "documents")
	if err != nil {
		return nil, "", err
	}
	switch {
	case limit == 0:
		limit = domain.DefaultList
	case limit < 0 || limit > domain.MaxList:
		return nil, "", errs.Invalid("limit: 1–%d", domain.MaxList)
	}
	if cursor != "" && !ids.Has(ids.Document, cursor) {
		return nil, "", errs.Invalid("cursor: not one artifact_list returned")
	}
	w, err := s.readable(ctx, workarea)
	if err != nil {
		return nil, "", err
	}
	var out []View
	after := cursor
	// Documents the caller may not reach yet are skipped; read in batches
	// until the page is full, the workarea has no more, or maxScan
	// documents were read (the page then ends early, with a cursor).
	scanned, exhausted := 0, false
	for len(out) < limit && scanned < maxScan {
		docs, err := s.Repo.In(ctx, c.TenantID, w.ID, session, after, limit)
		if err != nil {
			return nil, "", fmt.Errorf("list documents: %w", err)
		}
		scanned += len(docs)
		for i, d := range docs {
			after = d.ID
			r, err := s.viewOf(ctx, c, d, w.Path, false)
			if errs.Is(err, errs.NotFound) {
				continue
			}
			if err != nil {
				return nil, "", err
			}
			out = append(out, r)
			if len(out) == limit {
				// Full: done, unless this was the workarea's last document.
				exhausted = i == len(docs)-1 && len(docs) < limit
				break
			}
		}
		if len(docs) < limit && len(out) < limit {
			exhausted = true
		}
		if exhausted {
			break
		}
	}
	if err := s.counts(ctx, c.TenantID, out); err != nil {
		return nil, "", err
	}
	next := ""
	if !exhausted && after != "" {
		next = after
	}
	return out, next, nil
}

// maxScan bounds the documents one listing page reads.
const maxScan = 1000

// reach resolves a document the caller may read, with its counts.
func (s *Service) reach(ctx context.Context, id string) (View, error) {
	c, err := auth.ContentCaller(ctx, "documents")
	if err != nil {
		return View{}, err
	}
	if !ids.Has(ids.Document, id) {
		return View{}, notFound()
	}
	d, err := s.Repo.Get(ctx, c.TenantID, id)
	if errors.Is(err, ErrNotFound) {
		return View{}, notFound()
	}
	if err != nil {
		return View{}, fmt.Errorf("read document: %w", err)
	}
	w, err := s.Access.Workarea(ctx, d.WorkareaID)
	if errs.Is(err, errs.NotFound) || (err == nil && !w.Reader) {
		return View{}, notFound()
	}
	if err != nil {
		return View{}, err
	}
	r, err := s.viewOf(ctx, c, d, w.Path, true)
	if err != nil {
		return View{}, err
	}
	views := []View{r}
	if err := s.counts(ctx, c.TenantID, views); err != nil {
		return View{}, err
	}
	return views[0], nil
}

// viewOf reads what the caller sees of d: the promoted head (and its own
// held versions), else its own newest held version, else — for the
// document's creator with only a draft — the document alone; anyone
// else gets not found.
func (s *Service) viewOf(ctx context.Context, c auth.Caller, d domain.Document, workareaPath string, drafts bool) (View, error) {
	head, err := s.Admission.Head(ctx, c.TenantID, d.WorkareaID, d.Key())
	if err != nil && !errors.Is(err, ErrNotFound) {
		return View{}, fmt.Errorf("read head: %w", err)
	}
	promoted := err == nil
	own, err := s.Admission.Versions(ctx, c.TenantID, d.WorkareaID, d.Key(), []string{domain.StateHeld}, c.PrincipalID, 0, 10, true)
	if err != nil {
		return View{}, fmt.Errorf("read own versions: %w", err)
	}
	now := s.Now()
	own = slices.DeleteFunc(own, func(v domain.Version) bool { return !now.Before(v.HeldExpiresAt) })
	var v domain.Version
	switch {
	case promoted:
		v = head
	case len(own) > 0:
		v = own[0]
	case d.ActorPrincipal == c.PrincipalID:
		// A document created by a draft, nothing published yet.
	default:
		return View{}, notFound()
	}
	all, err := s.withMeta(ctx, c.TenantID, append([]domain.Version{v}, own...))
	if err == nil {
		_, err = s.number(ctx, d, all)
	}
	if err != nil {
		return View{}, err
	}
	r := s.view(d, workareaPath, all[0], all[1:], Counts{}, c.PrincipalID)
	if drafts {
		if _, err := s.Repo.Draft(ctx, c.TenantID, d.ID, c.PrincipalID); err == nil {
			r.DraftURL = s.url(d.ID) + "/draft"
		} else if !errors.Is(err, ErrNotFound) {
			return View{}, fmt.Errorf("read draft: %w", err)
		}
	}
	return r, nil
}

func (s *Service) view(d domain.Document, workareaPath string, v domain.Version, own []domain.Version, n Counts, _ string) View {
	r := View{Document: d, WorkareaPath: workareaPath, Version: v, OwnHeld: own, Counts: n}
	if v.State == domain.StatePromoted {
		r.ViewerURL = s.url(d.ID)
	}
	return r
}

// number sets each version's revision: its place among the document's
// promoted versions (1, 2, …), 0 for one not promoted (a held version's
// internal number counts others' versions, which nobody may learn of). It
// returns the promoted versions' internal numbers, oldest first.
func (s *Service) number(ctx context.Context, d domain.Document, vs []domain.Version) ([]int, error) {
	promoted, err := s.Admission.Promoted(ctx, d.TenantID, d.WorkareaID, d.Key())
	if err != nil {
		return nil, fmt.Errorf("read promoted versions: %w", err)
	}
	ord := make(map[string]int, len(promoted))
	numbers := make([]int, len(promoted))
	for i, p := range promoted {
		ord[p.ArtifactID], numbers[i] = i+1, p.Revision
	}
	for i := range vs {
		vs[i].Revision = ord[vs[i].ArtifactID]
	}
	return numbers, nil
}

func (s *Service) url(id string) string { return strings.TrimSuffix(s.PublicURL, "/") + "/d/" + id }

func (s *Service) counts(ctx context.Context, tenant string, views []View) error {
	if len(views) == 0 {
		return nil
	}
	docs := make([]string, len(views))
	for i, v := range views {
		docs[i] = v.Document.ID
	}
	n, err := s.Repo.Counts(ctx, tenant, docs)
	if err != nil {
		return fmt.Errorf("count comments: %w", err)
	}
	for i := range views {
		views[i].Counts = n[views[i].Document.ID]
	}
	return nil
}

func (s *Service) withMeta(ctx context.Context, tenant string, vs []domain.Version) ([]domain.Version, error) {
	var artifacts []string
	for _, v := range vs {
		if v.ArtifactID != "" {
			artifacts = append(artifacts, v.ArtifactID)
		}
	}
	if len(artifacts) == 0 {
		return vs, nil
	}
	meta, err := s.Repo.Meta(ctx, tenant, artifacts)
	if err != nil {
		return nil, fmt.Errorf("read version metadata: %w", err)
	}
	for i := range vs {
		m := meta[vs[i].ArtifactID]
		vs[i].Title, vs[i].Description, vs[i].Label = m.Title, m.Description, m.Label
	}
	return vs, nil
}

// readable resolves a workarea the caller reads (else not found).
func (s *Service) readable(ctx context.Context, ref string) (Workarea, error) {
	if ref == "" {
		return Workarea{}, errs.Invalid("workarea is required")
	}
	w, err := s.Access.Workarea(ctx, ref)
	if err != nil {
		return w, err
	}
	if !w.Reader {
		return w, errs.New(errs.NotFound, ruleReach, "no readable workarea with that reference for this key")
	}
	return w, nil
}

// writable resolves a workarea the caller writes.
func (s *Service) writable(ctx context.Context, ref string) (Workarea, error) {
	w, err := s.readable(ctx, ref)
	if err != nil {
		return w, err
	}
	switch {
	case w.Status == "validated":
		return w, errs.New(errs.Frozen, "status ladder: a validated workarea refuses new writes (D8)",
			"workarea %s is validated; documents, drafts and comments there are refused", w.ID)
	case w.Root:
		return w, errs.New(errs.Frozen, "universe is the tenant's root: write into a workarea below it (D8)",
			"workarea %s is universe; documents go into a workarea below it", w.ID)
	case !w.Writer:
		return w, errs.New(errs.Denied, ruleWrite, "this key has no writer access on workarea %s", w.ID)
	}
	return w, nil
}
