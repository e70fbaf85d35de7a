package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

const testKey = "sk-test-secret-key"

// fakeProvider speaks /v1/embeddings. By default it answers every input
// "text-N" with the vector (N+1, 1, 0, …) of length dim, listing the
// embeddings in reverse order so that clients must sort by index; fail may
// replace the answer to the call-th request (from 0).
type fakeProvider struct {
	dim  int
	fail func(call int, w http.ResponseWriter, r *http.Request, req embeddingsRequest) bool

	mu    sync.Mutex
	calls []fakeCall
}

type fakeCall struct {
	path string
	auth string
	req  embeddingsRequest
	raw  map[string]json.RawMessage
}

func (f *fakeProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var (
		req embeddingsRequest
		raw map[string]json.RawMessage
	)
	body := json.NewDecoder(r.Body)
	if err := body.Decode(&raw); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &req)
	f.mu.Lock()
	call := len(f.calls)
	f.calls = append(f.calls, fakeCall{path: r.URL.Path, auth: r.Header.Get("Authorization"), req: req, raw: raw})
	f.mu.Unlock()
	if f.fail != nil && f.fail(call, w, r, req) {
		return
	}
	writeEmbeddings(w, req, f.dim)
}

func writeEmbeddings(w http.ResponseWriter, req embeddingsRequest, dim int) {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	items := make([]item, 0, len(req.Input))
	for i := len(req.Input) - 1; i >= 0; i-- {
		n, _ := strconv.Atoi(strings.TrimPrefix(req.Input[i], "text-"))
		v := make([]float32, dim)
		v[0], v[1] = float32(n+1), 1
		items = append(items, item{Object: "embedding", Index: i, Embedding: v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": items, "model": req.Model})
}

func (f *fakeProvider) requests() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

// setup starts a fake provider and a client of it with fast retries.
func setup(t *testing.T, tweak func(*OpenAIConfig), fail func(int, http.ResponseWriter, *http.Request, embeddingsRequest) bool) (*OpenAI, *fakeProvider, *httptest.Server) {
	t.Helper()
	fake := &fakeProvider{dim: 8, fail: fail}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	cfg := OpenAIConfig{
		URL: srv.URL, Model: "fake-embed", Dim: 8, APIKey: testKey,
		Timeout: 2 * time.Second, Retries: 2, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
	}
	if tweak != nil {
		tweak(&cfg)
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o, fake, srv
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text-%d", i)
	}
	return out
}

// checkVectors checks that vecs[i] is the fake's unit vector for "text-i".
func checkVectors(t *testing.T, vecs [][]float32, n int) {
	t.Helper()
	if len(vecs) != n {
		t.Fatalf("got %d vectors, want %d", len(vecs), n)
	}
	for i, v := range vecs {
		if got := v[0] / v[1]; math.Abs(float64(got)-float64(i+1)) > 1e-3 {
			t.Fatalf("vector %d belongs to text %v: order not restored", i, got-1)
		}
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Fatalf("vector %d has norm %v, want 1", i, n)
		}
	}
}

func TestOpenAIBatching(t *testing.T) {
	t.Parallel()
	o, fake, _ := setup(t, func(c *OpenAIConfig) { c.Batch = 64 }, nil)
	vecs, err := o.Embed(context.Background(), Document, texts(150), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, vecs, 150)
	calls := fake.requests()
	if len(calls) != 3 {
		t.Fatalf("%d requests, want 3", len(calls))
	}
	for i, want := range []int{64, 64, 22} {
		c := calls[i]
		if len(c.req.Input) != want || c.req.Model != "fake-embed" || c.path != "/v1/embeddings" {
			t.Errorf("request %d: %d inputs, model %q, path %q", i, len(c.req.Input), c.req.Model, c.path)
		}
		if c.auth != "Bearer "+testKey {
			t.Errorf("request %d: Authorization %q", i, c.auth)
		}
		if _, ok := c.raw["dimensions"]; ok {
			t.Errorf("request %d sent dimensions without SendDimensions", i)
		}
	}
}

func TestOpenAIRequestShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		tweak    func(*OpenAIConfig)
		texts    []string
		wantSent int    // inputs sent
		wantDims string // raw "dimensions" field, "" when absent
		wantAuth string
	}{
		{"dimensions sent on request", func(c *OpenAIConfig) { c.SendDimensions = true }, texts(3), 3, "8", "Bearer " + testKey},
		{"no key, no header", func(c *OpenAIConfig) { c.APIKey = "" }, texts(2), 2, "", ""},
		{"blank texts are not sent", nil, []string{"text-0", "", "  \n", "text-3"}, 2, "", "Bearer " + testKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, fake, _ := setup(t, tt.tweak, nil)
			vecs, err := o.Embed(context.Background(), Query, tt.texts, map[string]float32{"x": 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(vecs) != len(tt.texts) {
				t.Fatalf("%d vectors for %d texts", len(vecs), len(tt.texts))
			}
			for i, text := range tt.texts {
				if strings.TrimSpace(text) == "" && norm(vecs[i]) != 0 {
					t.Errorf("blank text %d: want the zero vector", i)
				}
			}
			calls := fake.requests()
			if len(calls) != 1 || len(calls[0].req.Input) != tt.wantSent {
				t.Fatalf("requests %d, want 1 with %d inputs", len(calls), tt.wantSent)
			}
			if got := string(calls[0].raw["dimensions"]); got != tt.wantDims {
				t.Errorf("dimensions = %q, want %q", got, tt.wantDims)
			}
			if calls[0].auth != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", calls[0].auth, tt.wantAuth)
			}
		})
	}
}

// status answers the listed calls with a status, a Retry-After header
// (unless "") and a body; other calls succeed.
func status(code int, retryAfter, body string, calls ...int) func(int, http.ResponseWriter, *http.Request, embeddingsRequest) bool {
	return func(call int, w http.ResponseWriter, _ *http.Request, _ embeddingsRequest) bool {
		if calls != nil && !containsInt(calls, call) {
			return false
		}
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		http.Error(w, body, code)
		return true
	}
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// respond answers every call with a fixed body.
func respond(body string) func(int, http.ResponseWriter, *http.Request, embeddingsRequest) bool {
	return func(_ int, w http.ResponseWriter, _ *http.Request, _ embeddingsRequest) bool {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
		return true
	}
}

func TestOpenAIFailures(t *testing.T) {
	t.Parallel()
	hang := func(_ int, _ http.ResponseWriter, r *http.Request, _ embeddingsRequest) bool {
		select { // past the client's timeout, but let the server close promptly
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		return true
	}
	wrongDim := func(call int, w http.ResponseWriter, _ *http.Request, req embeddingsRequest) bool {
		if call == 0 {
			return false // the first batch is fine: the call must still fail as a whole
		}
		writeEmbeddings(w, req, 12)
		return true
	}
	tests := []struct {
		name      string
		tweak     func(*OpenAIConfig)
		fail      func(int, http.ResponseWriter, *http.Request, embeddingsRequest) bool
		wantCalls int
		wantCode  errs.Code // "" means success
		retryable bool
		wantIn    []string // substrings of the error
		wantIs    error
	}{
		{name: "429 then success", fail: status(429, "0", "slow down", 0), wantCalls: 3},
		{name: "429 with a date then success", fail: status(429, "Mon, 02 Jan 2006 15:04:05 GMT", "", 0), wantCalls: 3},
		{name: "500 then success", fail: status(500, "", "boom", 0), wantCalls: 3},
		{name: "503 twice then success", fail: status(503, "0", "", 0, 1), wantCalls: 4},
		{name: "408 then success", fail: status(408, "", "", 0), wantCalls: 3},
		{
			name: "429 forever", fail: status(429, "0", "rate limited"), wantCalls: 3,
			wantCode: errs.LimitRate, retryable: true, wantIn: []string{"retry after", "status 429", "/v1/embeddings"},
		},
		{
			name: "500 forever", fail: status(500, "", "internal"), wantCalls: 3,
			wantCode: errs.Unavailable, retryable: true, wantIn: []string{"status 500", "/v1/embeddings"},
		},
		{
			name: "400 is not retried", fail: status(400, "", "input too long"), wantCalls: 1,
			wantCode: errs.Internal, wantIn: []string{"status 400", "/v1/embeddings", "input too long"},
		},
		{
			name: "401 echoing the key", fail: status(401, "", "Incorrect API key provided: "+testKey), wantCalls: 1,
			wantCode: errs.Internal, wantIn: []string{"status 401", "[redacted]"},
		},
		{
			name: "timeout", tweak: func(c *OpenAIConfig) { c.Timeout = 30 * time.Millisecond; c.Retries = 1 },
			fail: hang, wantCalls: 2, wantCode: errs.Unavailable, retryable: true, wantIn: []string{"timed out after 30ms"},
		},
		{
			name: "dimension mismatch", fail: wrongDim, wantCalls: 2, wantCode: errs.Internal,
			wantIn: []string{"12-dimensional", "dimension is 8", `"fake-embed"`},
		},
		{
			name: "malformed JSON", fail: respond(`{"data": [`), wantCalls: 1,
			wantCode: errs.Internal, wantIs: ErrMalformedResponse,
		},
		{
			name: "wrong count", fail: respond(`{"data": [{"index": 0, "embedding": [1,0,0,0,0,0,0,0]}]}`), wantCalls: 1,
			wantCode: errs.Internal, wantIs: ErrMalformedResponse, wantIn: []string{"1 embeddings for 64 inputs"},
		},
		{
			name: "missing index", tweak: func(c *OpenAIConfig) { c.Batch = 1 },
			fail: respond(`{"data": [{"embedding": [1,0,0,0,0,0,0,0]}]}`), wantCalls: 1,
			wantCode: errs.Internal, wantIs: ErrMalformedResponse, wantIn: []string{"without an index"},
		},
		{
			name: "repeated index", tweak: func(c *OpenAIConfig) { c.Batch = 2 },
			fail:      respond(`{"data": [{"index": 1, "embedding": [1,0,0,0,0,0,0,0]}, {"index": 1, "embedding": [1,0,0,0,0,0,0,0]}]}`),
			wantCalls: 1, wantCode: errs.Internal, wantIs: ErrMalformedResponse, wantIn: []string{"repeated"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, fake, _ := setup(t, tt.tweak, tt.fail)
			const n = 100 // two batches: a success takes one request more than the failures
			vecs, err := o.Embed(context.Background(), Document, texts(n), nil)
			if got := len(fake.requests()); got != tt.wantCalls {
				t.Errorf("%d requests, want %d", got, tt.wantCalls)
			}
			if tt.wantCode == "" {
				if err != nil {
					t.Fatal(err)
				}
				checkVectors(t, vecs, n)
				return
			}
			if err == nil {
				t.Fatal("want an error")
			}
			t.Log(err)
			if vecs != nil {
				t.Errorf("got %d vectors with the error, want none", len(vecs))
			}
			typed := errs.From(err)
			if typed.Code != tt.wantCode || typed.Retryable != tt.retryable {
				t.Errorf("code %s retryable %v, want %s %v (%v)", typed.Code, typed.Retryable, tt.wantCode, tt.retryable, err)
			}
			if tt.retryable && typed.RetryAfter <= 0 {
				t.Errorf("retryable error without RetryAfter: %v", err)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks the API key: %v", err)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v is not %v", err, tt.wantIs)
			}
		})
	}
}

func TestOpenAIDimensionError(t *testing.T) {
	t.Parallel()
	o, _, _ := setup(t, nil, func(_ int, w http.ResponseWriter, _ *http.Request, req embeddingsRequest) bool {
		writeEmbeddings(w, req, 1536)
		return true
	})
	_, err := o.Embed(context.Background(), Document, texts(3), nil)
	var dimErr *DimensionError
	if !errors.As(err, &dimErr) {
		t.Fatalf("err = %v, want a *DimensionError", err)
	}
	if *dimErr != (DimensionError{Model: "fake-embed", Want: 8, Got: 1536}) {
		t.Fatalf("DimensionError = %+v", *dimErr)
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	o, err := NewOpenAI(OpenAIConfig{URL: url, Model: "m", Dim: 4, Retries: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Embed(context.Background(), Query, []string{"wing"}, nil)
	if typed := errs.From(err); typed.Code != errs.Unavailable || !typed.Retryable {
		t.Fatalf("err = %v, want a retryable %s", err, errs.Unavailable)
	}
}

func TestOpenAICancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	o, _, _ := setup(t, func(c *OpenAIConfig) { c.Backoff, c.MaxBackoff = time.Minute, time.Minute },
		func(_ int, w http.ResponseWriter, _ *http.Request, _ embeddingsRequest) bool {
			// A retryable failure makes the client back off for a minute;
			// the caller gives up meanwhile.
			cancel()
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return true
		})
	start := time.Now()
	_, err := o.Embed(ctx, Document, texts(3), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s after cancellation", d)
	}
}

func TestOpenAIConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		url      string
		model    string
		dim      int
		wantURL  string
		wantFail bool
	}{
		{"base", "http://h:11434", "m", 8, "http://h:11434/v1/embeddings", false},
		{"base with slash", "http://h:11434/", "m", 8, "http://h:11434/v1/embeddings", false},
		{"v1", "https://api.example.com/v1", "m", 8, "https://api.example.com/v1/embeddings", false},
		{"v1 with slash", "https://api.example.com/v1/", "m", 8, "https://api.example.com/v1/embeddings", false},
		{"full", "https://api.example.com/v1/embeddings", "m", 8, "https://api.example.com/v1/embeddings", false},
		{"prefix path", "http://h/openai", "m", 8, "http://h/openai/v1/embeddings", false},
		{"query kept", "https://h/v1?api-version=2", "m", 8, "https://h/v1/embeddings?api-version=2", false},
		{"empty URL", "", "m", 8, "", true},
		{"not http", "ftp://h/v1", "m", 8, "", true},
		{"relative", "/v1", "m", 8, "", true},
		{"no model", "http://h", " ", 8, "", true},
		{"no dimension", "http://h", "m", 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, err := NewOpenAI(OpenAIConfig{URL: tt.url, Model: tt.model, Dim: tt.dim})
			if tt.wantFail {
				if err == nil {
					t.Fatalf("want an error, got endpoint %q", o.endpoint)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.endpoint != tt.wantURL {
				t.Errorf("endpoint %q, want %q", o.endpoint, tt.wantURL)
			}
			if o.Model() != "m-8" || o.Dim() != 8 {
				t.Errorf("Model %q Dim %d", o.Model(), o.Dim())
			}
			if o.cfg.Timeout != DefaultTimeout || o.cfg.Retries != DefaultRetries || o.cfg.Batch != DefaultBatch {
				t.Errorf("defaults not applied: %+v", o.cfg)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", -1},
		{"0", 0},
		{"7", 7 * time.Second},
		{"-3", -1},
		{"soon", -1},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
