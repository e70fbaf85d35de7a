package web

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/omlhub/oml/platform/errs"
)

// signInCookie carries the sign-in form's own CSRF token (double submit):
// there is no session yet to derive one from.
const signInCookie = "oml_signin"

type signInData struct {
	CSRF    string
	Next    string
	Problem string
}

// home is GET /: the queue when signed in, the sign-in page otherwise.
func (p *Pages) home(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(p.cookie); err == nil {
		if _, err := p.d.Sessions.Resolve(r.Context(), c.Value); err == nil {
			http.Redirect(w, r, "/queue", http.StatusSeeOther)
			return
		}
		p.clearCookie(w)
	}
	p.signInForm(w, r, http.StatusOK, "")
}

func (p *Pages) signInPage(w http.ResponseWriter, r *http.Request) {
	p.signInForm(w, r, http.StatusOK, "")
}

func (p *Pages) signInForm(w http.ResponseWriter, r *http.Request, status int, problem string) {
	tok := randomToken(24)
	http.SetCookie(w, &http.Cookie{Name: signInCookie, Value: tok, Path: "/sign-in", HttpOnly: true, Secure: p.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	p.render(w, r, status, "signin", "Sign in", "", signInData{CSRF: tok, Next: localPath(r.URL.Query().Get("next")), Problem: problem})
}

// signIn is POST /sign-in: a pasted key becomes a web session.
func (p *Pages) signIn(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		p.refuse(w, r, errs.New(errs.LimitSize, "form bodies are bounded (64 KiB)", "the form could not be read"))
		return
	}
	c, err := r.Cookie(signInCookie)
	got := r.PostForm.Get("csrf")
	if err != nil || got == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(got)) != 1 {
		p.refuse(w, r, errs.New(errs.Denied, ruleCSRF, "the sign-in form's token is missing or stale; open the sign-in page again. Nothing was changed"))
		return
	}
	s, err := p.d.Sessions.SignIn(r.Context(), strings.TrimSpace(r.PostForm.Get("key")), p.d.SessionTTL)
	if err != nil {
		e := errs.From(err)
		if e.Code == errs.Internal {
			p.refuse(w, r, err)
			return
		}
		p.signInForm(w, r, http.StatusUnauthorized, "That key was not accepted ("+string(e.Code)+"): it is unknown, malformed or revoked.")
		return
	}
	p.setCookie(w, s)
	http.Redirect(w, r, orDefault(localPath(r.PostForm.Get("next")), "/queue"), http.StatusSeeOther)
}

// signInCode is GET /sign-in/code?code=…: make run's one-time link.
func (p *Pages) signInCode(w http.ResponseWriter, r *http.Request) {
	s, err := p.d.Sessions.RedeemCode(r.Context(), r.URL.Query().Get("code"), p.d.SessionTTL)
	if err != nil {
		p.refuse(w, r, err)
		return
	}
	p.setCookie(w, s)
	http.Redirect(w, r, "/queue", http.StatusSeeOther)
}

// signOut is POST /sign-out: the session ends on the server too.
func (p *Pages) signOut(w http.ResponseWriter, r *http.Request) {
	s, _ := current(r)
	if err := p.d.Sessions.SignOut(r.Context(), s.token); err != nil {
		p.refuse(w, r, err)
		return
	}
	p.clearCookie(w)
	http.Redirect(w, r, "/sign-in", http.StatusSeeOther)
}

// localPath keeps a redirect target on this site: a path, never "//host"
// or a scheme.
func localPath(s string) string {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.ContainsAny(s, "\\\r\n") {
		return ""
	}
	return s
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
