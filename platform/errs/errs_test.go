package errs_test

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/transport"
)

// TestDesignStatuses holds the table to DESIGN.md's Errors section: each
// code it lists answers with the status it names.
func TestDesignStatuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code errs.Code
		want []int // DESIGN allows either of two for some families
	}{
		{errs.Validation, []int{400}},
		{errs.AuthMissing, []int{401}},
		{errs.AuthInvalid, []int{401}},
		{"auth.expired_key", []int{401}}, // the family, not only today's codes
		{errs.NotFound, []int{404}},
		{errs.VerbCeiling, []int{403}},
		{errs.Denied, []int{403}},
		{errs.Frozen, []int{409}},
		{errs.ClaimKeyConflict, []int{409, 422}},
		{errs.LineageRequired, []int{409, 422}},
		{errs.ScanBlocked, []int{409, 422}},
		{errs.SimulationFence, []int{409, 422}},
		{errs.UploadUnusable, []int{409, 422}},
		{errs.SuccessorExists, []int{409, 422}},
		{errs.IdempotencyClash, []int{409}},
		{errs.DigestMismatch, []int{409}},
		{errs.LimitSize, []int{413}},
		{errs.LimitQuota, []int{429}},
		{errs.LimitRate, []int{429}},
		{errs.ServeExpired, []int{409, 410}},
		{errs.ServeConsumed, []int{409, 410}},
		{errs.Internal, []int{500}},
	} {
		if got := errs.HTTPStatus(c.code); !slices.Contains(c.want, got) {
			t.Errorf("%s → %d, DESIGN.md says %v", c.code, got, c.want)
		}
	}
}

// codeConstants lists the Code constants declared in errs.go, so a code
// added there is checked here without a second list to keep.
func codeConstants(t *testing.T) map[string]errs.Code {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "errs.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]errs.Code{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			lit := v.Values[0].(*ast.BasicLit)
			out[v.Names[0].Name] = errs.Code(strings.Trim(lit.Value, `"`))
		}
	}
	if len(out) < 30 {
		t.Fatalf("found %d Code constants in errs.go; the parse missed them", len(out))
	}
	return out
}

// TestEveryCodeHasAStatus: only internal is a 500; every refusal has its
// own status (a code that fell through to 500 would read as a server bug).
func TestEveryCodeHasAStatus(t *testing.T) {
	t.Parallel()
	for name, code := range codeConstants(t) {
		got := errs.HTTPStatus(code)
		if code == errs.Internal {
			if got != 500 {
				t.Errorf("%s → %d, want 500", name, got)
			}
			continue
		}
		if got == 500 || got < 400 {
			t.Errorf("%s (%s) → %d, want a 4xx (or 503) of its own", name, code, got)
		}
	}
}

// TestWire checks what a client receives: the envelope, Retry-After on
// retryable quotas, WWW-Authenticate on auth refusals, internal masked.
func TestWire(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		err        error
		status     int
		retryAfter string
		authHeader bool
		message    string
	}{
		{"quota", errs.Retry(errs.LimitQuota, "quota", 1500*time.Millisecond, "too many"), 429, "2", false, "too many"},
		{"rate", errs.Retry(errs.LimitRate, "rate", 30*time.Second, "slow down"), 429, "30", false, "slow down"},
		{"missing key", errs.New(errs.AuthMissing, "bearer", "no key"), 401, "", true, "no key"},
		{"not found", errs.New(errs.NotFound, "D7", "no such artifact"), 404, "", false, "no such artifact"},
		{"wrapped internal", errs.Wrap(errors.New("pq: secret table"), "load"), 500, "", false, "internal error; it has been logged"},
		{"untyped error", errors.New("dial tcp 10.0.0.7:5432"), 500, "", false, "internal error; it has been logged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			transport.Error(w, httptest.NewRequest(http.MethodGet, "/", nil), c.err)
			if w.Code != c.status || w.Header().Get("Retry-After") != c.retryAfter || (w.Header().Get("WWW-Authenticate") != "") != c.authHeader {
				t.Fatalf("status %d, Retry-After %q, WWW-Authenticate %q", w.Code, w.Header().Get("Retry-After"), w.Header().Get("WWW-Authenticate"))
			}
			var env errs.Envelope
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
				t.Fatal(err)
			}
			if env.Error.Message != c.message || env.Error.Retryable != (c.retryAfter != "") || strings.Contains(w.Body.String(), "10.0.0.7") || strings.Contains(w.Body.String(), "secret") {
				t.Fatalf("body = %s", w.Body.String())
			}
		})
	}
}
