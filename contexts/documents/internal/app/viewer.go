package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/omlhub/oml/contexts/documents/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
)

// Shown is what the viewer renders: a document's promoted version or a
// draft.
type Shown struct {
	Title   string
	Format  string
	Content string
}

// ErrPasswordRequired is the viewer's answer for a password-protected
// document read without (or with a wrong) password.
var ErrPasswordRequired = errors.New("password required")

// Show is the browser viewer's read of a document's promoted version (the
// public URL, /d/{id}): a public document for anyone, a password one for
// anyone with the password, a workarea one for a signed-in reader (the
// caller in ctx, when there is one). A document with no promoted version,
// an unknown one and one the visitor may not see answer alike.
func (s *Service) Show(ctx context.Context, id, password string) (Shown, error) {
	if !ids.Has(ids.Document, id) {
		return Shown{}, notFound()
	}
	d, err := s.Repo.ByID(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Shown{}, notFound()
	}
	if err != nil {
		return Shown{}, fmt.Errorf("read document: %w", err)
	}
	// A document with no promoted version is unknown to every visitor,
	// before any password is asked for (R3).
	head, err := s.Admission.Head(ctx, d.TenantID, d.WorkareaID, d.Key())
	if errors.Is(err, ErrNotFound) {
		return Shown{}, notFound()
	}
	if err != nil {
		return Shown{}, fmt.Errorf("read head: %w", err)
	}
	switch d.Visibility {
	case domain.Public:
	case domain.Password:
		// A signed-in reader needs no password; a key derivation runs only
		// for a password given, and wrong ones are throttled.
		if err := s.signedInReader(ctx, d); err != nil {
			if password == "" {
				return Shown{}, ErrPasswordRequired
			}
			ok, err := s.guard.check(ctx, d.ID, s.Now(), func() bool { return d.PasswordMatches(password) })
			if err != nil {
				return Shown{}, err
			}
			if !ok {
				return Shown{}, ErrPasswordRequired
			}
		}
	default:
		if err := s.signedInReader(ctx, d); err != nil {
			return Shown{}, err
		}
	}
	vs, err := s.withMeta(ctx, d.TenantID, []domain.Version{head})
	if err != nil {
		return Shown{}, err
	}
	return Shown{Title: vs[0].Title, Format: d.Format, Content: head.Content}, nil
}

// ShowDraft is the viewer's read of the signed-in caller's own draft of a
// document (/d/{id}/draft): nobody else's, ever.
func (s *Service) ShowDraft(ctx context.Context, id string) (Shown, error) {
	c, err := auth.ContentCaller(ctx, "documents")
	if err != nil {
		return Shown{}, err
	}
	if !ids.Has(ids.Document, id) {
		return Shown{}, notFound()
	}
	d, err := s.Repo.Get(ctx, c.TenantID, id)
	if errors.Is(err, ErrNotFound) {
		return Shown{}, notFound()
	}
	if err != nil {
		return Shown{}, fmt.Errorf("read document: %w", err)
	}
	if err := s.signedInReader(ctx, d); err != nil {
		return Shown{}, err
	}
	content, err := s.Repo.Draft(ctx, c.TenantID, id, c.PrincipalID)
	if errors.Is(err, ErrNotFound) {
		return Shown{}, notFound()
	}
	if err != nil {
		return Shown{}, fmt.Errorf("read draft: %w", err)
	}
	return Shown{Title: "Draft", Format: d.Format, Content: content}, nil
}

// signedInReader checks that ctx carries a caller of d's tenant that reads
// d's workarea.
func (s *Service) signedInReader(ctx context.Context, d domain.Document) error {
	c, ok := auth.From(ctx)
	if !ok || c.TenantID != d.TenantID {
		return notFound()
	}
	w, err := s.Access.Workarea(ctx, d.WorkareaID)
	if errs.Is(err, errs.NotFound) || (err == nil && !w.Reader) {
		return notFound()
	}
	return err
}
