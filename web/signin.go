package web

import (
	"crypto/subtle"
	"net/http"
	"net/url"
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
	if !p.signInToken(w, r) {
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

type codeData struct {
	CSRF      string
	Code      string
	Principal string
	Role      string
	// Current is the principal this browser is signed in as now, if any.
	Current string
}

// signInCodePage is GET /sign-in/code?code=…: the one-time link (make
// run, oml web link) names the key it signs in as and asks first. Opening
// the link spends nothing: a link preview cannot use it up, and another
// site cannot sign this browser in as someone else's key unasked.
func (p *Pages) signInCodePage(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	c, err := p.d.Sessions.PeekCode(r.Context(), code)
	if err != nil {
		p.refuse(w, r, err)
		return
	}
	data := codeData{CSRF: randomToken(24), Code: code, Principal: c.Principal, Role: c.Role}
	if ck, err := r.Cookie(p.cookie); err == nil {
		if cur, err := p.d.Sessions.Resolve(r.Context(), ck.Value); err == nil {
			data.Current = cur.Principal
		}
	}
	http.SetCookie(w, &http.Cookie{Name: signInCookie, Value: data.CSRF, Path: "/sign-in", HttpOnly: true, Secure: p.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	p.render(w, r, http.StatusOK, "code", "Sign in", "", data)
}

// signInCode is POST /sign-in/code: the confirmed link spends its code
// and starts a web session.
func (p *Pages) signInCode(w http.ResponseWriter, r *http.Request) {
	if !p.signInToken(w, r) {
		return
	}
	s, err := p.d.Sessions.RedeemCode(r.Context(), r.PostForm.Get("code"), p.d.SessionTTL)
	if err != nil {
		p.refuse(w, r, err)
		return
	}
	p.setCookie(w, s)
	http.Redirect(w, r, "/queue", http.StatusSeeOther)
}

// signInToken checks a sign-in form's double-submitted token; a refusal
// is written when it fails.
func (p *Pages) signInToken(w http.ResponseWriter, r *http.Request) bool {
	if err := r.ParseForm(); err != nil {
		p.refuse(w, r, errs.New(errs.LimitSize, "form bodies are bounded (64 KiB)", "the form could not be read"))
		return false
	}
	c, err := r.Cookie(signInCookie)
	got := r.PostForm.Get("csrf")
	if err != nil || got == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(got)) != 1 {
		p.refuse(w, r, errs.New(errs.Denied, ruleCSRF, "the sign-in form's token is missing or stale; open the sign-in page again. Nothing was changed"))
		return false
	}
	return true
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
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.Contains(s, "\\") {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f { // a tab or newline a browser would drop
			return ""
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || strings.HasPrefix(u.Path, "//") {
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
