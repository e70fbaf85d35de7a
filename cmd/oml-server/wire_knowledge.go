package main

import (
	"context"
	"errors"
	"slices"

	"github.com/omlhub/oml/contexts/access"
	"github.com/omlhub/oml/contexts/admission"
	"github.com/omlhub/oml/contexts/inbox"
	"github.com/omlhub/oml/contexts/knowledge"
	"github.com/omlhub/oml/contexts/sessions"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/scope"
	"github.com/omlhub/oml/platform/transport"
)

// knowledgeAccess adapts the access context to the knowledge context's
// Access port.
type knowledgeAccess struct{ m *access.Module }

func (a knowledgeAccess) Workarea(ctx context.Context, ref string) (knowledge.Workarea, error) {
	w, err := a.m.Effective(ctx, ref)
	return knowledge.Workarea{ID: w.ID, Path: w.Path, IDPath: w.IDPath, Reader: slices.Contains(w.Scopes, string(scope.Reader)),
		Writer: slices.Contains(w.Scopes, string(scope.Writer))}, err
}

func (a knowledgeAccess) Readable(ctx context.Context) (scope.Subtrees, error) {
	return a.m.Subtrees(ctx, scope.Reader)
}

// knowledgeAdmission adapts the admission context to the knowledge
// context's Admission port: a page version is a claim of kind page.
type knowledgeAdmission struct{ m *admission.Module }

func toVersion(c admission.Claim) knowledge.Version {
	return knowledge.Version{ArtifactID: c.ID, WorkareaID: c.WorkareaID, Path: c.ClaimKey, Number: c.Version, State: string(c.State),
		Content: c.Text, Version: c.PageVersion, BaseVersion: c.BaseVersion, AuthorKeyID: c.AuthorKeyID,
		AuthorPrincipal: c.AuthorPrincipal, SubmittedAt: c.SubmittedAt, PromotedAt: c.PromotedAt, HeldExpiresAt: c.HeldExpiresAt,
		Size: int64(c.TextBytes)}
}

func toVersions(cs []admission.Claim, err error) ([]knowledge.Version, error) {
	if err != nil {
		return nil, err
	}
	out := make([]knowledge.Version, len(cs))
	for i, c := range cs {
		out[i] = toVersion(c)
	}
	return out, nil
}

func pageErr(err error) error {
	if errors.Is(err, admission.ErrNotFound) {
		return knowledge.ErrNotFound
	}
	return err
}

func (a knowledgeAdmission) Submit(ctx context.Context, s knowledge.Submission, then func(context.Context, knowledge.Version) error) (knowledge.Version, error) {
	c, err := a.m.SubmitPage(ctx, s.WorkareaID, s.Path, s.Content, s.BaseVersion, func(ctx context.Context, c admission.Claim) error {
		return then(ctx, toVersion(c))
	})
	return toVersion(c), err
}

func (a knowledgeAdmission) Head(ctx context.Context, tenant, workarea, path string) (knowledge.Version, error) {
	c, err := a.m.PageHead(ctx, tenant, workarea, path)
	return toVersion(c), pageErr(err)
}

func (a knowledgeAdmission) ByVersion(ctx context.Context, tenant, workarea, path, version string) (knowledge.Version, error) {
	c, err := a.m.PageByVersion(ctx, tenant, workarea, path, version)
	return toVersion(c), pageErr(err)
}

func (a knowledgeAdmission) Versions(ctx context.Context, tenant, workarea, path string, states []string, author string, before, limit int, withText bool) ([]knowledge.Version, error) {
	return toVersions(a.m.PageVersions(ctx, tenant, workarea, path, states, author, before, limit, withText))
}

func (a knowledgeAdmission) Promoted(ctx context.Context, tenant, workarea, path string) ([]knowledge.Version, error) {
	return toVersions(a.m.PromotedVersions(ctx, tenant, workarea, path))
}

func (a knowledgeAdmission) Heads(ctx context.Context, tenant string, f knowledge.HeadFilter) ([]knowledge.Version, error) {
	return toVersions(a.m.PageHeads(ctx, tenant, admission.PageFilter{Within: f.Within, Workareas: f.Workareas,
		AfterWorkarea: f.AfterWorkarea, AfterPath: f.AfterPath, Prefix: f.Prefix, Limit: f.Limit}))
}

// sessionsKB adapts the knowledge context to the sessions context's
// KnowledgeBase port (the brain tools with store "project").
type sessionsKB struct{ m *knowledge.Module }

func toKBPage(v knowledge.Version, workareaPath string) sessions.KBPage {
	return sessions.KBPage{Workarea: v.WorkareaID, WorkareaPath: workareaPath, Path: v.Path, Content: v.Content, Version: v.Version,
		State: v.State, Deleted: v.Deleted(), ArtifactID: v.ArtifactID, Revision: v.Number, Size: v.Bytes(), Author: v.AuthorPrincipal,
		SubmittedAt: v.SubmittedAt, PromotedAt: v.PromotedAt, BaseVersion: v.BaseVersion, StaleAfter: v.StaleAfter,
		SourceSession: v.SourceSession}
}

func (a sessionsKB) Get(ctx context.Context, workarea, path, version string) (sessions.KBPage, error) {
	p, err := a.m.Get(ctx, workarea, path, version)
	if err != nil {
		return sessions.KBPage{}, err
	}
	out := toKBPage(p.Version, p.WorkareaPath)
	for _, h := range p.OwnHeld {
		if h.ArtifactID == p.ArtifactID {
			continue
		}
		out.OwnHeld = append(out.OwnHeld, sessions.HeldPage{Version: h.Version, ArtifactID: h.ArtifactID, Revision: h.Number,
			SubmittedAt: h.SubmittedAt, HeldExpiresAt: h.HeldExpiresAt, Deleted: h.Deleted()})
	}
	return out, nil
}

func (a sessionsKB) Put(ctx context.Context, p sessions.PagePut) (sessions.KBPage, error) {
	v, err := a.m.Put(ctx, knowledge.Put{Workarea: p.Workarea, Path: p.Path, Content: p.Content, IfVersion: p.IfVersion,
		StaleAfter: p.StaleAfter, SourceSession: p.SourceSession})
	if err != nil {
		return sessions.KBPage{}, err
	}
	out := toKBPage(v, "")
	return out, nil
}

func (a sessionsKB) List(ctx context.Context, workarea, prefix, cursor string, limit int) (sessions.PageList, error) {
	l, err := a.m.List(ctx, workarea, prefix, cursor, limit)
	if err != nil {
		return sessions.PageList{}, err
	}
	out := sessions.PageList{Workarea: l.WorkareaID, Next: l.Next, Pages: make([]sessions.KBPage, len(l.Versions))}
	for i, v := range l.Versions {
		out.Pages[i] = toKBPage(v, "")
	}
	return out, nil
}

// kbResources adapts the knowledge context to the MCP resources' port:
// promoted pages only.
type kbResources struct{ m *knowledge.Module }

func (a kbResources) Pages(ctx context.Context, afterWorkarea, afterPath string, limit int) ([]transport.KBPageRef, error) {
	vs, err := a.m.Readable(ctx, afterWorkarea, afterPath, limit)
	if err != nil {
		return nil, err
	}
	out := make([]transport.KBPageRef, len(vs))
	for i, v := range vs {
		out[i] = transport.KBPageRef{Workarea: v.WorkareaID, Path: v.Path, Size: v.Size}
	}
	return out, nil
}

func (a kbResources) Page(ctx context.Context, workarea, path string) (string, error) {
	p, err := a.m.Get(ctx, workarea, path, "")
	if err != nil {
		return "", err
	}
	if p.State != knowledge.StatePromoted {
		return "", errs.New(errs.NotFound, "a page is a resource once a version of it is promoted", "no page at %s", path)
	}
	return p.Content, nil
}

// briefPages adapts the knowledge context to the inbox context's Pages
// port (the session brief's stale pages).
type briefPages struct{ m *knowledge.Module }

func (a briefPages) Stale(ctx context.Context, workarea string) (inbox.StalePages, error) {
	st, err := a.m.Stale(ctx, workarea)
	if err != nil {
		return inbox.StalePages{}, err
	}
	out := inbox.StalePages{More: st.More, Capped: st.Capped}
	for _, p := range st.Pages {
		out.Items = append(out.Items, inbox.StalePage{Path: p.Path, Version: p.Version, StaleAfter: *p.StaleAfter, PromotedAt: p.PromotedAt})
	}
	return out, nil
}
