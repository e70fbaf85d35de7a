package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/textsafe"
	"github.com/omlhub/oml/platform/transport"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Sessions is the access context as the pages need it: web sign-in,
// sessions and sign-out. Credentials are stored hashed there.
type Sessions interface {
	SignIn(ctx context.Context, key string, ttl time.Duration) (SignedIn, error)
	RedeemCode(ctx context.Context, code string, ttl time.Duration) (SignedIn, error)
	PeekCode(ctx context.Context, code string) (auth.Caller, error)
	Resolve(ctx context.Context, token string) (auth.Caller, error)
	SignOut(ctx context.Context, token string) error
}

// SignedIn is a new web session; Token goes into the cookie only.
type SignedIn struct {
	Token     string
	ExpiresAt time.Time
	Caller    auth.Caller
}

// Deps configure [New].
type Deps struct {
	Sessions Sessions
	Logger   *slog.Logger
	// SessionTTL is how long a web session lives (OML_WEB_SESSION_TTL).
	SessionTTL time.Duration
	// PublicURL is the URL browsers use: its origin is the only one a
	// state-changing request may come from, and an https URL makes the
	// cookie Secure.
	PublicURL string
	// AllowedOrigins are further origins allowed (OML_ALLOWED_ORIGINS).
	AllowedOrigins []string
	// TLS says the server itself terminates TLS (the cookie is Secure).
	TLS bool
	// Documents serves the document viewer (/d/{id}); nil: none.
	Documents Documents
}

// Pages serve the browser pages. They are a client of the HTTP API in
// process (see [transport.Pages]): every rule stays in the contexts.
type Pages struct {
	d       Deps
	api     http.Handler
	pages   map[string]*template.Template
	static  http.Handler
	secure  bool
	cookie  string
	origins map[string]bool
}

// The page security policy: nothing but this origin's own files, no
// inline script or style, no framing, forms post only here.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// maxForm bounds a form body.
const maxForm = 64 << 10

// New parses the embedded templates.
func New(d Deps) (*Pages, error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.SessionTTL <= 0 {
		d.SessionTTL = 12 * time.Hour
	}
	p := &Pages{d: d, pages: map[string]*template.Template{}, origins: map[string]bool{}}
	u, err := url.Parse(d.PublicURL)
	if err == nil && u.Host != "" {
		p.origins[u.Scheme+"://"+u.Host] = true
	}
	for _, o := range d.AllowedOrigins {
		p.origins[strings.TrimRight(o, "/")] = true
	}
	p.secure = d.TLS || (err == nil && u.Scheme == "https")
	// A __Host- cookie is Secure, host-only and path=/, by the browser's own rule.
	p.cookie = "oml_session"
	if p.secure {
		p.cookie = "__Host-oml_session"
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("web: parse %s: %w", n, err)
		}
		p.pages[base] = t
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	p.static = http.StripPrefix("/static/", http.FileServerFS(sub))
	return p, nil
}

// PageRoutes registers the pages on the top-level router; api is the
// whole surface, called in process.
func (p *Pages) PageRoutes(r chi.Router, api http.Handler) {
	p.api = api
	r.Group(func(r chi.Router) {
		r.Use(p.headers)
		r.Get("/static/*", p.serveStatic)
		r.Get("/", p.home)
		r.Get("/sign-in", p.signInPage)
		r.With(p.sameOrigin).Post("/sign-in", p.signIn)
		p.documentRoutes(r)
		r.Get("/sign-in/code", p.signInCodePage)
		r.With(p.sameOrigin).Post("/sign-in/code", p.signInCode)
		r.Group(func(r chi.Router) {
			r.Use(p.session)
			r.Get("/queue", p.queue)
			r.Get("/review/{serve_id}", p.item)
			r.Get("/review/artifacts/{id}/attachments/{sha256}", p.download)
			r.Get("/inbox", p.inbox)
			r.Get("/inbox/wait", p.inboxWait)
			r.Get("/overview", p.overview)
			r.Get("/workareas/{id}", p.workarea)
			r.Group(func(r chi.Router) {
				r.Use(p.sameOrigin, p.csrf)
				r.Post("/sign-out", p.signOut)
				r.Post("/review/serve", p.serve)
				r.Post("/review/{serve_id}/verdict", p.verdict)
				r.Post("/review/{serve_id}/release", p.release)
				r.Post("/inbox/{id}/answer", p.answer)
				r.Post("/inbox/{id}/decide", p.decide)
				r.Post("/workareas/{id}/verify", p.verify)
			})
		})
	})
}

// headers marks every page response: the strict policy above, no
// sniffing, no referrer to another site (a sign-in link's code never leaves in one), no
// framing, no caching of what a session saw.
func (p *Pages) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			h.Set("Cache-Control", "no-store")
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		next.ServeHTTP(w, r)
	})
}

func (p *Pages) serveStatic(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	p.static.ServeHTTP(w, r)
}

// The rules the pages' own refusals name.
const (
	ruleCSRF       = "every state-changing form carries this session's CSRF token"
	ruleSameOrigin = "state-changing requests come from this site's own pages (Origin, Sec-Fetch-Site)"
	ruleSignedIn   = "the pages act as a signed-in key (a web session); sign in with a key"
)

// sameOrigin refuses a POST another site's page sent: a foreign Origin
// or a Sec-Fetch-Site other than same-origin (or none, a typed URL).
func (p *Pages) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site := r.Header.Get("Sec-Fetch-Site")
		origin := strings.TrimRight(r.Header.Get("Origin"), "/")
		if (site != "" && site != "same-origin" && site != "none") || (origin != "" && !p.origins[origin]) {
			p.refuse(w, r, errs.New(errs.Denied, ruleSameOrigin, "this request came from another site (origin %q); nothing was changed", origin))
			return
		}
		next.ServeHTTP(w, r)
	})
}

type sessionKey struct{}

type sess struct {
	caller auth.Caller
	token  string
}

// session resolves the cookie into the key it acts as. A page without a
// live session goes to the sign-in page; a form post is refused.
func (p *Pages) session(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(p.cookie)
		var caller auth.Caller
		if err == nil {
			caller, err = p.d.Sessions.Resolve(r.Context(), c.Value)
			if err != nil && !errs.Is(err, errs.AuthInvalid) {
				// The store failed, not the session: keep the cookie.
				p.refuse(w, r, err)
				return
			}
		}
		if err != nil {
			if c != nil {
				p.clearCookie(w)
			}
			if r.Method == http.MethodGet && r.Header.Get("Accept") != "application/json" {
				http.Redirect(w, r, "/sign-in?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			p.refuse(w, r, errs.New(errs.AuthInvalid, ruleSignedIn, "you are not signed in (the session is unknown, expired, signed out or its key revoked); nothing was changed"))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess{caller: caller, token: c.Value})))
	})
}

func current(r *http.Request) (sess, bool) {
	s, ok := r.Context().Value(sessionKey{}).(sess)
	return s, ok
}

// csrfToken is derived from the session's secret cookie: only a page
// that could read the session's own HTML knows it, and it reveals
// nothing of the cookie.
func csrfToken(sessionToken string) string {
	sum := sha256.Sum256([]byte("oml-web-csrf\x00" + sessionToken))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// csrf refuses a form post without this session's token.
func (p *Pages) csrf(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, _ := current(r)
		if err := r.ParseForm(); err != nil {
			p.refuse(w, r, errs.New(errs.LimitSize, "form bodies are bounded (64 KiB)", "the form could not be read: %v", err))
			return
		}
		got := r.PostForm.Get("csrf")
		if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(csrfToken(s.token))) != 1 {
			p.refuse(w, r, errs.New(errs.Denied, ruleCSRF, "the form's CSRF token is missing or not this session's; reload the page and try again. Nothing was changed"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (p *Pages) setCookie(w http.ResponseWriter, s SignedIn) {
	http.SetCookie(w, &http.Cookie{
		Name: p.cookie, Value: s.Token, Path: "/", Expires: s.ExpiresAt,
		HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteStrictMode,
	})
}

func (p *Pages) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: p.cookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteStrictMode})
}

// apiError is a typed refusal the API answered.
type apiError struct {
	Status int
	Body   errs.Body
}

func (e *apiError) Error() string { return string(e.Body.Code) + ": " + e.Body.Message }

// call runs one API request in process as the session's key and decodes
// its JSON answer into out (nil: ignore it). A 204 leaves out alone and
// returns ok false.
func (p *Pages) call(r *http.Request, method, path string, body, out any) (bool, error) {
	s, ok := current(r)
	if !ok {
		return false, errs.New(errs.AuthMissing, ruleSignedIn, "not signed in")
	}
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return false, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(transport.AsCaller(r.Context(), s.caller), method, path, rd)
	if err != nil {
		return false, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := &recorder{header: http.Header{}}
	p.api.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.status >= 400 {
		var env errs.Envelope
		if err := json.Unmarshal(rec.body.Bytes(), &env); err != nil || env.Error.Code == "" {
			return false, fmt.Errorf("web: %s %s: status %d without a typed error", method, path, rec.status)
		}
		return false, &apiError{Status: rec.status, Body: env.Error}
	}
	if rec.status == http.StatusNoContent {
		return false, nil
	}
	if out != nil {
		if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
			return false, fmt.Errorf("web: decode %s %s: %w", method, path, err)
		}
	}
	return true, nil
}

// recorder buffers an in-process API answer.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// view is what every page template gets.
type view struct {
	Title     string
	Nav       string
	Principal string
	Role      string
	KeyID     string
	CSRF      string
	Data      any
}

func (p *Pages) render(w http.ResponseWriter, r *http.Request, status int, page, title, nav string, data any) {
	p.execute(w, r, status, page, "layout.html", viewFor(r, title, nav, data))
}

func viewFor(r *http.Request, title, nav string, data any) view {
	v := view{Title: title, Nav: nav, Data: data}
	if s, ok := current(r); ok {
		v.Principal, v.Role, v.KeyID, v.CSRF = s.caller.Principal, s.caller.Role, s.caller.KeyID, csrfToken(s.token)
	}
	return v
}

// renderPart renders one named template of a page without the layout
// (what a page's script swaps in).
func (p *Pages) renderPart(w http.ResponseWriter, r *http.Request, page, part string, data any) {
	p.execute(w, r, http.StatusOK, page, part, viewFor(r, "", "", data))
}

func (p *Pages) execute(w http.ResponseWriter, r *http.Request, status int, page, name string, v view) {
	t, ok := p.pages[page]
	if !ok {
		p.d.Logger.ErrorContext(r.Context(), "web: no such page", "page", page)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, v); err != nil {
		p.d.Logger.ErrorContext(r.Context(), "web: render", "page", page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// refusal is the refusal page's data: the code, the rule and the message,
// in words.
type refusal struct {
	Status  int
	Code    string
	Rule    string
	Message string
	Words   string
}

// refuse renders a refusal page; an internal cause is logged, never shown.
func (p *Pages) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	var body errs.Body
	status := 0
	if errors.As(err, &ae) {
		body, status = ae.Body, ae.Status
	} else {
		e := errs.From(err)
		if e.Code == errs.Internal {
			p.d.Logger.ErrorContext(r.Context(), "web: internal", "path", r.URL.Path, "err", err)
		}
		body, status = e.Public(), errs.HTTPStatus(e.Code)
	}
	if body.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(body.RetryAfterSeconds))
	}
	p.render(w, r, status, "refusal", "Refused: "+string(body.Code), "", refusal{
		Status: status, Code: string(body.Code), Rule: body.Rule, Message: body.Message, Words: words(string(body.Code)),
	})
}

// words says a refusal in plain words.
func words(code string) string {
	switch code {
	case "review.serve_expired":
		return "This serve expired before a verdict reached it. The item went back to the queue; serve again to review it."
	case "review.serve_consumed":
		return "This serve already took its verdict (or was released). Nothing more can be recorded on it."
	case "review.not_independent":
		return "You are not independent of this item: you, or another key of yours, wrote it, something in its lineage, or already judged it."
	case "review.closure_bound":
		return "The only items left have a lineage too large to check, so nobody can review them."
	case "access.not_found":
		return "There is nothing here that this key may see."
	case "access.denied", "access.verb_ceiling":
		return "This key may not do that here."
	case "auth.invalid_key", "auth.missing_key":
		return "You are not signed in, or your session ended. Sign in again."
	case "workarea.frozen":
		return "The workarea is validated (frozen): it takes no more verdicts or writes."
	case "inbox.conflict":
		return "This item was already resolved (answered, decided, or closed at its deadline)."
	case "request.validation":
		return "Something in the form was not acceptable."
	case "limit.size":
		return "The form was too large."
	}
	return "The server refused this request."
}

var funcs = template.FuncMap{
	"utc": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"short": func(s string) string {
		if len(s) > 16 {
			return s[:16] + "…"
		}
		return s
	},
	"bytes": func(n int64) string {
		switch {
		case n >= 1<<30:
			return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
		case n >= 1<<20:
			return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
		case n >= 1<<10:
			return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
		}
		return fmt.Sprintf("%d B", n)
	},
	"hasPrefix": strings.HasPrefix,
	// visible shows direction overrides in agent-written text as marks.
	"visible": textsafe.Page,
	"past": func(verdict string) string {
		switch verdict {
		case "approve":
			return "approved"
		case "reject":
			return "rejected"
		}
		return verdict
	},
}

// randomToken returns n random bytes, URL-safe encoded.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
