package transport

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/omlhub/oml/platform/errs"
)

// Query reads a request's query parameters for a route that takes names:
// each at most once and no other (request.validation otherwise, naming
// what the route takes). An absent parameter is "".
func Query(r *http.Request, names ...string) (map[string]string, error) {
	out := make(map[string]string, len(names))
	for name, vals := range r.URL.Query() {
		if !slices.Contains(names, name) {
			return nil, errs.Invalid("%s %s: unknown parameter %q (want %s)", r.Method, r.URL.Path, name, strings.Join(names, ", "))
		}
		if len(vals) != 1 {
			return nil, errs.Invalid("%s %s: %s given %d times", r.Method, r.URL.Path, name, len(vals))
		}
		out[name] = vals[0]
	}
	return out, nil
}

// QueryInt parses an integer parameter Query read; absent is 0.
func QueryInt(q map[string]string, name string) (int, error) {
	v := q[name]
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, errs.Invalid("%s: want an integer, got %q", name, v)
	}
	return n, nil
}
