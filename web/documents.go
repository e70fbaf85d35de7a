package web

import (
	"bytes"
	"context"
	"errors"
	"html"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/yuin/goldmark"

	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
)

// Documents is the documents context as the viewer reads it.
type Documents interface {
	// Show reads a document's promoted version: public, with the
	// password, or for the signed-in caller in ctx (ErrPasswordRequired
	// when a password is needed and was not given right).
	Show(ctx context.Context, id, password string) (Shown, error)
	// ShowDraft reads the signed-in caller's own draft of a document.
	ShowDraft(ctx context.Context, id string) (Shown, error)
}

// Shown is a document as the viewer renders it.
type Shown struct {
	Title   string
	Format  string // html | markdown
	Content string
}

// ErrPasswordRequired is what Documents.Show returns when the document
// needs a password it was not given.
var ErrPasswordRequired = errors.New("password required")

// documentCSP sandboxes a document: an opaque origin (no access to OML's
// cookies or storage, no credentialed calls to its API), no scripts, no
// network but images; it cannot be framed or navigate its opener.
const documentCSP = "sandbox; default-src 'none'; img-src data: https:; style-src 'unsafe-inline'; font-src data:; " +
	"form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

const maxPasswordForm = 4 << 10

// documentRoutes serves the viewer: /d/{id} (the promoted version, by its
// visibility) and /d/{id}/draft (the signed-in caller's own draft).
func (p *Pages) documentRoutes(r chi.Router) {
	r.Get("/d/{id}", p.document)
	r.With(p.sameOrigin).Post("/d/{id}", p.document)
	r.With(p.session).Get("/d/{id}/draft", p.draft)
}

// document shows a document's promoted version: public for anyone, a
// password one after its form, a workarea one for a signed-in reader; a
// missing document, one without a promoted version and one the visitor
// may not see are all not found.
func (p *Pages) document(w http.ResponseWriter, r *http.Request) {
	if p.d.Documents == nil {
		p.refuse(w, r, errs.New(errs.NotFound, "no documents here", "no document with that id"))
		return
	}
	id := chi.URLParam(r, "id")
	ctx := p.optionalCaller(r)
	password := ""
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxPasswordForm)
		if err := r.ParseForm(); err != nil {
			p.refuse(w, r, errs.Invalid("the form could not be read"))
			return
		}
		password = r.PostForm.Get("password")
	}
	shown, err := p.d.Documents.Show(ctx, id, password)
	if errors.Is(err, ErrPasswordRequired) {
		status, problem := http.StatusUnauthorized, ""
		if r.Method == http.MethodPost {
			problem = "That password does not open this document."
		}
		p.render(w, r, status, "docpassword", "Password protected", "", struct{ ID, Problem string }{id, problem})
		return
	}
	if _, signedIn := auth.From(ctx); errs.Is(err, errs.NotFound) && !signedIn {
		// A link from another site arrives without the (SameSite=Strict)
		// session cookie: say how a reader opens a workarea document.
		err = errs.New(errs.NotFound, "a document opens for visitors when public or password-protected, else for its workarea's signed-in readers",
			"no document with that id is open to visitors; if you read its workarea, sign in (/sign-in) and open this link again")
	}
	if err != nil {
		p.refuse(w, r, err)
		return
	}
	p.serveDocument(w, r, shown)
}

// draft shows the signed-in caller's own draft of a document.
func (p *Pages) draft(w http.ResponseWriter, r *http.Request) {
	s, _ := current(r)
	if p.d.Documents == nil {
		p.refuse(w, r, errs.New(errs.NotFound, "no documents here", "no document with that id"))
		return
	}
	shown, err := p.d.Documents.ShowDraft(auth.With(r.Context(), s.caller), chi.URLParam(r, "id"))
	if err != nil {
		p.refuse(w, r, err)
		return
	}
	p.serveDocument(w, r, shown)
}

// optionalCaller is r's context with the signed-in caller, when the
// request carries a live session cookie.
func (p *Pages) optionalCaller(r *http.Request) context.Context {
	c, err := r.Cookie(p.cookie)
	if err != nil {
		return r.Context()
	}
	caller, err := p.d.Sessions.Resolve(r.Context(), c.Value)
	if err != nil {
		return r.Context()
	}
	return auth.With(r.Context(), caller)
}

// serveDocument writes a document under the sandbox: HTML as it is,
// markdown rendered (raw HTML in it escaped).
func (p *Pages) serveDocument(w http.ResponseWriter, r *http.Request, d Shown) {
	var buf bytes.Buffer
	if d.Format == "markdown" {
		buf.WriteString("<!doctype html><meta charset=\"utf-8\"><title>" + html.EscapeString(d.Title) + "</title>\n")
		if err := goldmark.Convert([]byte(d.Content), &buf); err != nil {
			p.refuse(w, r, err)
			return
		}
	} else {
		buf.WriteString(d.Content)
	}
	h := w.Header()
	h.Set("Content-Security-Policy", documentCSP)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}
