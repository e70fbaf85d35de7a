// Package transport is the shared HTTP and MCP adapter layer: the chi
// router, bearer-key authentication, the Origin check on /mcp, bounded
// bodies, typed error responses, request ids and access logs, and the MCP
// server in stateless JSON mode. Contexts register their routes and tools
// here; the transport holds no business rule.
package transport

import (
	"cmp"
	"context"
	_ "embed"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/buildinfo"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/metrics"
)

//go:embed guide.md
var guideTemplate string

// Module is what a bounded context contributes to the surface.
type Module interface {
	// Routes registers HTTP routes; r is mounted at /v1 behind auth.
	Routes(r chi.Router)
	// Tools registers MCP tools.
	Tools(t *Tools)
}

// PublicModule is a module with routes that take no key (enrolment): they
// are registered on the root router at their full paths, bounded and
// URL-checked like the rest, and answer for themselves who may call.
type PublicModule interface {
	PublicRoutes(r chi.Router)
}

// StreamModule is a module with routes that read large bodies and bound
// them themselves (attachment parts); they are mounted at /v1 behind auth
// but outside the JSON body limit.
type StreamModule interface {
	StreamRoutes(r chi.Router)
}

// Options configure [New].
type Options struct {
	Logger        *slog.Logger
	Authenticator Authenticator
	MaxBodyBytes  int64
	// MaxMCPBodyBytes bounds a /mcp body (MaxBodyBytes when 0).
	MaxMCPBodyBytes int64
	PublicURL       string
	AllowedOrigins  []string
	// Ready reports whether the server can take traffic (/readyz).
	Ready func(ctx context.Context) error
	// Metrics, when set with MetricsToken, is served at GET /metrics to a
	// bearer of that token (an operator's scraper, not a tenant's key; see
	// docs/OPERATIONS.md). Without a token it is not served here.
	Metrics      http.Handler
	MetricsToken string
	Name         string
	// Trailer, when set, adds a member to every successful tool result
	// (see [Trailer]).
	Trailer *Trailer
	// Pages, when set, registers the browser pages (web/) at the top
	// level beside /v1 and /mcp.
	Pages Pages
	// KB, when set, lists and reads the knowledge base's pages as MCP
	// resources (oml://kb/{workarea}/{+path}).
	KB KBResources
	// Limiter, when set, enforces quotas and rate limits: every
	// authenticated request takes one of its key's requests, every write
	// (a /v1 request that is not a GET, POST /v1/recall aside, and every
	// MCP tool that is not read-only) one of its tenant's writes.
	Limiter Limiter
}

// KBResources is the knowledge base as the MCP resources list and read
// it, for the caller in ctx: promoted pages it may read.
type KBResources interface {
	// Pages lists live pages after (workarea id, path), at most limit.
	Pages(ctx context.Context, afterWorkarea, afterPath string, limit int) ([]KBPageRef, error)
	// Page reads one page's promoted head; a missing page and an
	// unreadable one are access.not_found.
	Page(ctx context.Context, workarea, path string) (string, error)
}

// KBPageRef is a listed page.
type KBPageRef struct {
	Workarea string // id
	Path     string // /fs/…
	Size     int64
}

// Limiter is the quota check (the access context's, D6).
type Limiter interface {
	Request(ctx context.Context, c auth.Caller) error
	Write(ctx context.Context, c auth.Caller) error
}

// Pages are routes for browsers, authenticated their own way (a web
// session cookie). They call the API in process through api, with the
// caller they resolved carried by [AsCaller]: the same handlers, rules and
// errors as a bearer-key client gets.
type Pages interface {
	PageRoutes(r chi.Router, api http.Handler)
}

// GuidePath is where the agent guide is served (whoami reports it).
const GuidePath = "/v1/guide"

// New builds the whole HTTP surface.
func New(opts Options, modules ...Module) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tools := newTools(opts.Name, log, opts.Trailer)
	tools.limiter = opts.Limiter
	for _, m := range modules {
		m.Tools(tools)
	}

	r := chi.NewRouter()
	r.Use(observe(log))
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		Error(w, r, errs.New(errs.RouteNotFound, "HTTP API routes (docs/API.md)", "no route %s %s", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(methodNotAllowed)

	r.Get("/healthz", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if opts.Ready != nil {
			if err := opts.Ready(r.Context()); err != nil {
				metrics.Ready.Set(0)
				Error(w, r, err)
				return
			}
		}
		metrics.Ready.Set(1)
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	if opts.Metrics != nil && opts.MetricsToken != "" {
		r.With(refuseBadURL, requireToken(opts.MetricsToken)).Get("/metrics", opts.Metrics.ServeHTTP)
	}

	r.Route("/mcp", func(r chi.Router) {
		r.Use(checkOrigin(allowedOrigins(opts.PublicURL, opts.AllowedOrigins)))
		r.With(authenticate(opts.Authenticator), refuseBadURL, bufferMCP(cmp.Or(opts.MaxMCPBodyBytes, opts.MaxBodyBytes))).Post("/", tools.handler().ServeHTTP)
	})

	if opts.Pages != nil {
		opts.Pages.PageRoutes(r, r)
	}

	public := r.With(refuseBadURL, limitBody(opts.MaxBodyBytes))
	for _, m := range modules {
		if p, ok := m.(PublicModule); ok {
			p.PublicRoutes(public)
		}
	}

	guide := []byte(strings.ReplaceAll(guideTemplate, "{{URL}}", opts.PublicURL))
	tools.addResources(guide, opts.KB)
	// The bootstrap is public: an agent reads how to connect before it
	// has a key (seed 002).
	skill := SkillMarkdown(guide)
	r.With(refuseBadURL).Get("/bootstrap/SKILL.md", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		_, _ = w.Write(skill)
	})
	r.Route("/v1", func(r chi.Router) {
		// A key is checked first (401 before anything else), then the URL:
		// NUL or non-UTF-8 in a path or query never reaches a handler.
		r.Use(authenticate(opts.Authenticator), limit(opts.Limiter), refuseBadURL)
		r.Group(func(r chi.Router) {
			r.Use(limitBody(opts.MaxBodyBytes))
			r.Get("/version", func(w http.ResponseWriter, r *http.Request) {
				WriteJSON(w, http.StatusOK, buildinfo.Read())
			})
			r.Get("/guide", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
				_, _ = w.Write(guide)
			})
			for _, m := range modules {
				m.Routes(r)
			}
		})
		for _, m := range modules {
			if s, ok := m.(StreamModule); ok {
				s.StreamRoutes(r)
			}
		}
	})
	return r
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/mcp" {
		// Stateless MCP: no server-initiated stream, no session to delete.
		w.Header().Set("Allow", "POST")
	}
	Error(w, r, errs.New(errs.MethodNotAllowed, "HTTP API routes (docs/API.md); /mcp takes POST only (stateless, no SSE)",
		"method %s is not allowed on %s", r.Method, r.URL.Path))
}

func allowedOrigins(publicURL string, extra []string) map[string]bool {
	m := map[string]bool{}
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		m[u.Scheme+"://"+u.Host] = true
	}
	for _, o := range extra {
		m[o] = true
	}
	return m
}
