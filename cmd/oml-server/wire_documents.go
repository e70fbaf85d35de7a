package main

import (
	"context"
	"errors"
	"slices"

	"github.com/omlhub/oml/contexts/access"
	"github.com/omlhub/oml/contexts/admission"
	"github.com/omlhub/oml/contexts/documents"
	"github.com/omlhub/oml/platform/scope"
	"github.com/omlhub/oml/web"
)

// documentsAccess adapts the access context to the documents context's
// Access port.
type documentsAccess struct{ m *access.Module }

func (a documentsAccess) Workarea(ctx context.Context, ref string) (documents.Workarea, error) {
	w, err := a.m.Effective(ctx, ref)
	return documents.Workarea{ID: w.ID, Path: w.Path, IDPath: w.IDPath, Status: w.Status, Root: w.Root,
		Reader: slices.Contains(w.Scopes, string(scope.Reader)),
		Writer: slices.Contains(w.Scopes, string(scope.Writer))}, err
}

// documentsAdmission adapts the admission context to the documents
// context's Admission port: a document version is a claim of kind
// document.
type documentsAdmission struct{ m *admission.Module }

func toDocVersion(c admission.Claim) documents.Version {
	return documents.Version{ArtifactID: c.ID, Revision: c.Version, State: string(c.State), Content: c.Text, Version: c.PageVersion,
		BaseVersion: c.BaseVersion, AuthorPrincipal: c.AuthorPrincipal, SubmittedAt: c.SubmittedAt, PromotedAt: c.PromotedAt,
		HeldExpiresAt: c.HeldExpiresAt, Size: c.TextBytes}
}

func docErr(err error) error {
	if errors.Is(err, admission.ErrNotFound) {
		return documents.ErrNotFound
	}
	return err
}

func (a documentsAdmission) Submit(ctx context.Context, s documents.Submission, then func(context.Context, documents.Version) error) (documents.Version, error) {
	c, err := a.m.SubmitDocument(ctx, s.WorkareaID, s.Key, s.Content, s.BaseVersion, func(ctx context.Context, c admission.Claim) error {
		return then(ctx, toDocVersion(c))
	})
	return toDocVersion(c), err
}

func (a documentsAdmission) Head(ctx context.Context, tenant, workarea, key string) (documents.Version, error) {
	c, err := a.m.PageHead(ctx, tenant, workarea, key)
	return toDocVersion(c), docErr(err)
}

func (a documentsAdmission) ByVersion(ctx context.Context, tenant, workarea, key, version string) (documents.Version, error) {
	c, err := a.m.PageByVersion(ctx, tenant, workarea, key, version)
	return toDocVersion(c), docErr(err)
}

func (a documentsAdmission) Promoted(ctx context.Context, tenant, workarea, key string) ([]documents.Version, error) {
	cs, err := a.m.PromotedVersions(ctx, tenant, workarea, key)
	if err != nil {
		return nil, err
	}
	out := make([]documents.Version, len(cs))
	for i, c := range cs {
		out[i] = toDocVersion(c)
	}
	return out, nil
}

func (a documentsAdmission) Versions(ctx context.Context, tenant, workarea, key string, states []string, author string, before, limit int, withText bool) ([]documents.Version, error) {
	cs, err := a.m.PageVersions(ctx, tenant, workarea, key, states, author, before, limit, withText)
	if err != nil {
		return nil, err
	}
	out := make([]documents.Version, len(cs))
	for i, c := range cs {
		out[i] = toDocVersion(c)
	}
	return out, nil
}

// webDocuments adapts the documents context to the viewer's port.
type webDocuments struct{ m *documents.Module }

func (a webDocuments) Show(ctx context.Context, id, password string) (web.Shown, error) {
	s, err := a.m.Show(ctx, id, password)
	if errors.Is(err, documents.ErrPasswordRequired) {
		return web.Shown{}, web.ErrPasswordRequired
	}
	return web.Shown(s), err
}

func (a webDocuments) ShowDraft(ctx context.Context, id string) (web.Shown, error) {
	s, err := a.m.ShowDraft(ctx, id)
	return web.Shown(s), err
}
