package transport

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/omlhub/oml/platform/errs"
)

// fuzzIn has a field of each kind the tools' and routes' inputs use.
type fuzzIn struct {
	Query    string            `json:"query"`
	Scope    string            `json:"scope,omitempty"`
	K        int               `json:"k,omitempty"`
	Deadline *int64            `json:"expires_in_seconds,omitempty"`
	Force    bool              `json:"force,omitempty"`
	Options  []string          `json:"options,omitempty"`
	Meta     map[string]string `json:"meta,omitempty"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	Nested   *struct {
		Path  string  `json:"path"`
		Score float64 `json:"score,omitempty"`
	} `json:"nested,omitempty"`
	Items []struct {
		ID string `json:"id"`
	} `json:"items,omitempty"`
}

// FuzzDecodeJSON: the strict decoder every tool's arguments and every
// route's body go through either decodes into the type or refuses with
// request.validation; it never panics, never lets U+0000 or invalid UTF-8
// through, and a decoded value survives a round trip.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"query":"copper"}`, `{"query":"a","k":"8"}`, `{"QUERY":"a"}`, `{"query":"\u0000"}`,
		`{"query":"x","tenant":"t"}`, `{"query":"x","nested":{"path":"/a","tenant":"t"}}`, `{"query":"x","k":1e99}`,
		`{"query":"x","options":["a",null]}`, `{"query":"x","raw":{"a":[1,{"b":"\u0000"}]}}`, `{"query":"x","meta":{"\u0000":"v"}}`,
		`{"query":"x","items":[{"id":"a"},{"ID":"b"}]}`, "{\"query\":\"\xff\"}", `[{"query":"x"}]`, `{"query":"x"} {}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in fuzzIn
		err := DecodeJSON(data, &in)
		if err != nil {
			if e := errs.From(err); e.Code != errs.Validation {
				t.Fatalf("%q: refused with %s (%v), want request.validation", data, e.Code, err)
			}
			return
		}
		again, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("%q decoded to a value that does not encode: %v", data, err)
		}
		var back fuzzIn
		if err := DecodeJSON(again, &back); err != nil {
			t.Fatalf("%q decoded, re-encoded as %q, refused: %v", data, again, err)
		}
	})
}

// FuzzURL: a request line's path and query either reach a handler as
// valid UTF-8 without NUL, or are refused typed; never a panic.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"/v1/recall?scope=a&k=3", "/v1/x?cursor=%00", "/v1/x?a=%ff", "/v1/%c0%af", "/v1/x?a;b=c", "/v1/x?a=1&a=2",
		"/v1/workareas/%2e%2e/keys", "/v1/x?limit=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.ParseRequestURI(raw)
		if err != nil {
			return
		}
		reached := false
		h := refuseBadURL(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached = true
			q, err := Query(r, "cursor", "limit", "scope")
			if err != nil {
				if errs.From(err).Code != errs.Validation {
					t.Fatalf("%q: Query refused with %v", raw, err)
				}
				return
			}
			if _, err := QueryInt(q, "limit"); err != nil && errs.From(err).Code != errs.Validation {
				t.Fatalf("%q: QueryInt refused with %v", raw, err)
			}
		}))
		req := httptest.NewRequest("GET", "http://h/", nil)
		req.URL = u
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if !reached && rec.Code != http.StatusBadRequest {
			t.Fatalf("%q: refused with %d", raw, rec.Code)
		}
	})
}

// FuzzKBURI: a page URI parses to a workarea and a path that make the
// same URI again; never a panic.
func FuzzKBURI(f *testing.F) {
	for _, s := range []string{"oml://kb/wa_1/a.md", "oml://kb/wa_1/a/b%20c.md", "oml://kb/wa_1/%2e%2e/x", "oml://kb/wa_1/a%2Fb",
		"oml://kb/wa_1/%00", "oml://kb//x", "oml://kb/wa_1/a//b", "oml://kb/wa%ff/x", "oml://kb/wa_1/%e2%80%ae"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		wa, path, err := parseKBURI(uri)
		if err != nil {
			return
		}
		w2, p2, err := parseKBURI(kbURI(wa, path))
		if err != nil || w2 != wa || p2 != path {
			t.Fatalf("%q → (%q, %q) → %q → (%q, %q, %v)", uri, wa, path, kbURI(wa, path), w2, p2, err)
		}
	})
}
