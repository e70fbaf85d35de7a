package transport

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/errs"
)

// setSecurityHeaders marks every response before any handler writes: no
// MIME sniffing (a JSON body or the guide is never run as HTML), and no
// content, script or framing allowed for what the server sends. Pages that
// need more set their own Content-Security-Policy over this one.
func setSecurityHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// refuseBadURL refuses a request whose decoded path, or any query name or
// value, holds NUL or bytes that are not UTF-8, and a query string that
// does not parse. Route parameters and query values reach Postgres, which
// refuses both, and bad input is request.validation at the boundary, not a
// 500 from the database; a malformed pair would otherwise be dropped
// silently by url.Query.
func refuseBadURL(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkURL(r.URL); err != nil {
			Error(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func checkURL(u *url.URL) error {
	if !cleanText(u.Path) {
		return errs.Invalid("the request path holds NUL or bytes that are not UTF-8")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return errs.Invalid("the query string is malformed: %v", err)
	}
	for k, vs := range q {
		if !cleanText(k) {
			return errs.Invalid("a query parameter name holds NUL or bytes that are not UTF-8")
		}
		for _, v := range vs {
			if !cleanText(v) {
				return errs.Invalid("query parameter %q holds NUL or bytes that are not UTF-8", k)
			}
		}
	}
	return nil
}

// cleanText reports whether s can reach Postgres as text.
func cleanText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}
