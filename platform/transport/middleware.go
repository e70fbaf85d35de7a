package transport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/metrics"
)

// Authenticator resolves a bearer token to its caller. The access context
// implements it; cmd/oml-server wires it in.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (auth.Caller, error)
}

// reqInfo is what a request's handlers leave for its access log line.
type reqInfo struct {
	id    string
	keyID string
	err   *errs.Error
}

type reqInfoKey struct{}

func info(ctx context.Context) *reqInfo {
	ri, _ := ctx.Value(reqInfoKey{}).(*reqInfo)
	return ri
}

func noteError(ctx context.Context, e *errs.Error) {
	if ri := info(ctx); ri != nil {
		ri.err = e
	}
}

// RequestID returns the request id carried by ctx.
func RequestID(ctx context.Context) string {
	if ri := info(ctx); ri != nil {
		return ri.id
	}
	return ""
}

var clientRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe assigns a request id, sets the security headers, recovers panics
// and writes one access log line per request.
func observe(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ri := &reqInfo{id: r.Header.Get("X-Request-Id")}
			if !clientRequestID.MatchString(ri.id) {
				ri.id = ids.New(ids.Request)
			}
			w.Header().Set("X-Request-Id", ri.id)
			setSecurityHeaders(w.Header())
			sw := &statusWriter{ResponseWriter: w}
			r = r.WithContext(context.WithValue(r.Context(), reqInfoKey{}, ri))
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					log.ErrorContext(r.Context(), "panic", "request_id", ri.id, "panic", p, "stack", string(debug.Stack()))
					if sw.status == 0 {
						Error(sw, r, errs.Wrap(nil, "panic"))
					}
				}
				level := slog.LevelInfo
				if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || r.URL.Path == "/metrics" {
					level = slog.LevelDebug
				}
				attrs := []slog.Attr{
					slog.String("request_id", ri.id),
					slog.String("method", r.Method),
					slog.String("path", r.URL.Path),
					slog.Int("status", sw.status),
					slog.Int64("bytes", sw.bytes),
					slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				}
				if ri.keyID != "" {
					attrs = append(attrs, slog.String("key_id", ri.keyID))
				}
				if ri.err != nil {
					attrs = append(attrs, slog.String("error_code", string(ri.err.Code)))
					if ri.err.Code == errs.Internal {
						level = slog.LevelError
						attrs = append(attrs, slog.String("error", ri.err.Error()))
					}
				}
				log.LogAttrs(r.Context(), level, "request", attrs...)
				count(r, sw.status, ri.err, start)
			}()
			if n := headerFields(r.Header); n > MaxHeaderCount {
				Error(sw, r, errs.New(errs.LimitSize, "a request carries at most 100 header fields",
					"the request carries %d header fields", n))
				return
			}
			next.ServeHTTP(sw, r)
		})
	}
}

func headerFields(h http.Header) int {
	n := 0
	for _, vs := range h {
		n += len(vs)
	}
	return n
}

// count records a request in the metrics: by its route pattern (the raw
// path would make a series per id), and its refusal by code.
func count(r *http.Request, status int, e *errs.Error, start time.Time) {
	route := "unmatched"
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
		route = rc.RoutePattern()
	}
	if status == 0 {
		status = http.StatusOK
	}
	method := r.Method
	if !knownMethods[method] {
		method = "other"
	}
	metrics.HTTPRequests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	metrics.Since(metrics.HTTPDuration.WithLabelValues(route, method), start)
	if e != nil {
		surface := "http"
		if r.URL.Path == "/mcp" {
			surface = "mcp"
		}
		metrics.Refusals.WithLabelValues(string(e.Code), surface).Inc()
	}
}

// knownMethods bound the method label: anything else is "other".
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// limitBody bounds request bodies: a declared length over the limit is
// refused at once, anything else is cut off while it is read.
func limitBody(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > limit {
				Error(w, r, bodyTooLarge(limit))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			next.ServeHTTP(w, r)
		})
	}
}

// bufferMCP reads a bounded /mcp body into memory before the MCP SDK,
// so that a handler we do not own never sees an oversized one and the
// refusal stays typed. It refuses a JSON-RPC batch: the stateless server
// answers one request per POST, and each request is one against the key's
// rate limit (a batch would carry many for one).
func bufferMCP(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > limit {
				Error(w, r, bodyTooLarge(limit))
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
			if err != nil {
				Error(w, r, errs.Invalid("could not read the request body: %v", err))
				return
			}
			if int64(len(body)) > limit {
				Error(w, r, bodyTooLarge(limit))
				return
			}
			if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
				Error(w, r, errs.Invalid("JSON-RPC batches are not accepted: send one request per POST (stateless MCP)"))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}
}

// authenticate resolves the bearer key before any dispatch; no route
// behind it is reachable anonymously.
func authenticate(a Authenticator) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c, ok := r.Context().Value(asCallerKey{}).(auth.Caller); ok {
				// An in-process call from the pages, which resolved the
				// caller from their own session: no bearer key to check.
				if ri := info(r.Context()); ri != nil {
					ri.keyID = c.KeyID
				}
				next.ServeHTTP(w, r.WithContext(auth.With(r.Context(), c)))
				return
			}
			token, ok := Bearer(r.Header.Get("Authorization"))
			if !ok {
				Error(w, r, errs.New(errs.AuthMissing, "every call presents a bearer key; there is no anonymous call",
					"send Authorization: Bearer <key>"))
				return
			}
			caller, err := a.Authenticate(r.Context(), token)
			if err != nil {
				Error(w, r, err)
				return
			}
			if ri := info(r.Context()); ri != nil {
				ri.keyID = caller.KeyID
			}
			next.ServeHTTP(w, r.WithContext(auth.With(r.Context(), caller)))
		})
	}
}

type asCallerKey struct{}

// AsCaller returns ctx marked as carrying c, authenticated by the code that
// builds an in-process request with it (see [Pages]). Only Go code can set
// a context value: no request from the network carries the mark.
// The request routes afresh: the calling route's chi context (its path
// and URL parameters) is left behind.
func AsCaller(ctx context.Context, c auth.Caller) context.Context {
	ctx = context.WithValue(ctx, chi.RouteCtxKey, (*chi.Context)(nil))
	return context.WithValue(ctx, asCallerKey{}, c)
}

// Bearer returns the token of an Authorization header "Bearer <token>"
// (the scheme case-insensitive); ok is false when there is none.
func Bearer(h string) (token string, ok bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// requireToken admits only a bearer of token (compared in constant time,
// as digests so the length is not timed either); anything else is one
// auth.invalid_key answer.
func requireToken(token string) func(http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, ok := Bearer(r.Header.Get("Authorization"))
			sum := sha256.Sum256([]byte(got))
			if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
				Error(w, r, errs.New(errs.AuthInvalid, "/metrics answers only the operator's OML_METRICS_TOKEN",
					"send Authorization: Bearer <OML_METRICS_TOKEN>"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// checkOrigin refuses browser requests from origins other than the
// configured ones (DNS-rebinding defence). Requests without an Origin
// header (non-browser clients) pass.
func checkOrigin(allowed map[string]bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if o := r.Header.Get("Origin"); o != "" && !allowed[strings.TrimRight(o, "/")] {
				Error(w, r, errs.New(errs.Denied, "Origin validation on /mcp (DNS-rebinding defence)",
					"origin %q is not allowed; set OML_PUBLIC_URL or OML_ALLOWED_ORIGINS", o))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// limit takes one of the caller's key's requests and, for a /v1 write
// (anything but GET and HEAD, POST /v1/recall aside), one of its
// tenant's writes; a refusal is limit.rate or limit.quota, 429 with
// Retry-After. MCP takes both inside its own pipeline (Tools), so that a
// refusal reaches an MCP client as a tool error.
func limit(l Limiter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if l == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, _ := auth.From(r.Context())
			if err := l.Request(r.Context(), c); err != nil {
				Error(w, r, err)
				return
			}
			if r.Method != http.MethodGet && r.Method != http.MethodHead && r.URL.Path != "/v1/recall" {
				if err := l.Write(r.Context(), c); err != nil {
					Error(w, r, err)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}
