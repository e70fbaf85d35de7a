package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/omlhub/oml/contexts/documents/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
)

// Anchor places a comment: a promoted version (its revision; default the
// head) and a point (a byte offset) or a quote it contains.
type Anchor struct {
	Revision int
	Offset   *int
	Quote    string
}

// Posted is a comment with its delete token, shown once.
type Posted struct {
	Comment     domain.Comment
	DeleteToken string
}

// PostComment comments on a document's promoted version (writer on its
// workarea). The author is the caller, whatever the input says.
func (s *Service) PostComment(ctx context.Context, id, body string, a Anchor) (Posted, error) {
	r, err := s.reach(ctx, id)
	if err != nil {
		return Posted{}, err
	}
	if _, err := s.writable(ctx, r.Document.WorkareaID); err != nil {
		return Posted{}, err
	}
	if r.Version.State != domain.StatePromoted {
		return Posted{}, errs.New(errs.NotFound, "comments are on promoted versions (R3: a held version is its author's and its reviewers')",
			"document %s has no promoted version to comment on yet", id)
	}
	c, _ := auth.From(ctx)
	v := r.Version
	if a.Revision != 0 && a.Revision != v.Revision {
		numbers, err := s.number(ctx, r.Document, nil)
		if err != nil {
			return Posted{}, err
		}
		if a.Revision < 1 || a.Revision > len(numbers) {
			return Posted{}, errs.Invalid("anchor revision %d is not a promoted version of this document (1–%d)", a.Revision, len(numbers))
		}
		internal := numbers[a.Revision-1]
		vs, err := s.Admission.Versions(ctx, c.TenantID, r.Document.WorkareaID, r.Document.Key(), []string{domain.StatePromoted}, "", internal+1, 1, true)
		if err != nil {
			return Posted{}, fmt.Errorf("read version: %w", err)
		}
		if len(vs) == 0 || vs[0].Revision != internal {
			return Posted{}, errs.Invalid("anchor revision %d is not a promoted version of this document", a.Revision)
		}
		v = vs[0]
		v.Revision = a.Revision
	}
	body = strings.TrimSpace(body)
	if err := domain.CheckComment(body, a.Offset, a.Quote, v.Content); err != nil {
		return Posted{}, err
	}
	token, hash, err := domain.NewDeleteToken()
	if err != nil {
		return Posted{}, err
	}
	cm := domain.Comment{TenantID: c.TenantID, ID: ids.New(ids.Comment), DocumentID: id, Revision: v.Revision,
		AuthorPrincipal: c.PrincipalID, AuthorKeyID: c.KeyID, Body: body, AnchorOffset: a.Offset, AnchorQuote: a.Quote,
		DeleteTokenHash: hash, CreatedAt: s.Now()}
	if err := s.Repo.InsertComment(ctx, cm); err != nil {
		return Posted{}, fmt.Errorf("insert comment: %w", err)
	}
	return Posted{Comment: cm, DeleteToken: token}, nil
}

// Comments lists a document's comments, oldest first (at most
// domain.MaxComments), with the counts of all of them.
func (s *Service) Comments(ctx context.Context, id string) ([]domain.Comment, Counts, error) {
	r, err := s.reach(ctx, id)
	if err != nil {
		return nil, Counts{}, err
	}
	cs, err := s.Repo.Comments(ctx, r.Document.TenantID, id, domain.MaxComments)
	return cs, r.Counts, err
}

// ResolveComment marks a comment done or reopens it: with its delete
// token, or with writer access on the document's workarea.
func (s *Service) ResolveComment(ctx context.Context, id string, resolved bool, token string) (domain.Comment, error) {
	var out domain.Comment
	err := s.onComment(ctx, id, token, func(ctx context.Context, cm domain.Comment, by string) error {
		at := s.Now()
		cm.ResolvedAt, cm.ResolvedBy = &at, by
		if !resolved {
			cm.ResolvedAt, cm.ResolvedBy = nil, ""
		}
		out = cm
		return s.Repo.Resolve(ctx, cm.TenantID, cm.ID, cm.ResolvedAt, cm.ResolvedBy)
	})
	return out, err
}

// DeleteComment deletes a comment: with its delete token, or with writer
// access on the document's workarea (HTTP only: R1 keeps the verb off
// the MCP surface).
func (s *Service) DeleteComment(ctx context.Context, id, token string) error {
	return s.onComment(ctx, id, token, func(ctx context.Context, cm domain.Comment, _ string) error {
		return s.Repo.DeleteComment(ctx, cm.TenantID, cm.ID)
	})
}

// onComment locks a comment the caller may reach and runs fn when the
// token matches or the caller writes the document's workarea.
func (s *Service) onComment(ctx context.Context, id, token string, fn func(ctx context.Context, cm domain.Comment, by string) error) error {
	c, err := auth.ContentCaller(ctx, "documents")
	if err != nil {
		return err
	}
	missing := errs.New(errs.NotFound, ruleReach, "no comment with that id for this key")
	if !ids.Has(ids.Comment, id) {
		return missing
	}
	return s.Tx.InTx(ctx, func(ctx context.Context) error {
		cm, err := s.Repo.CommentForUpdate(ctx, c.TenantID, id)
		if errors.Is(err, ErrNotFound) {
			return missing
		}
		if err != nil {
			return fmt.Errorf("read comment: %w", err)
		}
		r, err := s.reach(ctx, cm.DocumentID)
		if errs.Is(err, errs.NotFound) {
			return missing
		}
		if err != nil {
			return err
		}
		if !cm.TokenMatches(token) {
			if _, err := s.writable(ctx, r.Document.WorkareaID); err != nil {
				return errs.New(errs.Denied, ruleComment, "the delete token does not match and this key does not write the document's workarea")
			}
		}
		return fn(ctx, cm, c.PrincipalID)
	})
}
