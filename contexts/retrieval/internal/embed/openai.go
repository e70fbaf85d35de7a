package embed

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

// Defaults of [OpenAIConfig].
const (
	DefaultTimeout    = 30 * time.Second
	DefaultRetries    = 3
	DefaultBatch      = 64
	DefaultBackoff    = 500 * time.Millisecond
	DefaultMaxBackoff = 20 * time.Second
)

// OpenAIConfig configures the client of an OpenAI-compatible embeddings API
// (OpenAI, Ollama, vLLM, llama.cpp, LiteLLM, …).
type OpenAIConfig struct {
	// URL is the base URL, e.g. http://localhost:11434; requests go to
	// URL + "/v1/embeddings". A URL already ending in /v1 or /v1/embeddings
	// is accepted as is.
	URL   string
	Model string
	// Dim is the expected dimension; every returned vector must have it.
	Dim int
	// SendDimensions asks the server to reduce vectors to Dim (the
	// "dimensions" request field); leave it off for servers that reject it.
	SendDimensions bool
	// APIKey, optional, is sent as "Authorization: Bearer" and never logged.
	APIKey string
	// Timeout bounds one request (default DefaultTimeout).
	Timeout time.Duration
	// Retries is how often a retryable failure — 408, 429, 5xx, a timeout,
	// a connection error — is retried (0 means DefaultRetries, negative none).
	Retries int
	// Batch is the number of texts per request (default DefaultBatch).
	Batch int
	// Backoff is the first retry's base delay, doubling per retry with
	// jitter (default DefaultBackoff).
	Backoff time.Duration
	// MaxBackoff caps one wait, a server's Retry-After included (default
	// DefaultMaxBackoff).
	MaxBackoff time.Duration
	// HTTPClient, optional, carries transport settings; per-request timeouts
	// come from Timeout.
	HTTPClient *http.Client
}

// OpenAI embeds texts through an OpenAI-compatible /v1/embeddings endpoint.
// Both roles are embedded the same way and rarity weights are ignored. It is
// safe for concurrent use.
type OpenAI struct {
	cfg      OpenAIConfig
	endpoint string // full request URL
	display  string // endpoint with any password redacted, for errors
	client   *http.Client
}

var _ Embedder = (*OpenAI)(nil)

// NewOpenAI validates cfg, fills in defaults and returns the client.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	endpoint, err := embeddingsURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("embed: openai: model is required")
	}
	if cfg.Dim <= 0 {
		return nil, fmt.Errorf("embed: openai: dimension must be positive, got %d", cfg.Dim)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &OpenAI{cfg: cfg, endpoint: endpoint.String(), display: endpoint.Redacted(), client: client}, nil
}

// embeddingsURL resolves a base URL to the embeddings endpoint.
func embeddingsURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("embed: openai: parse URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("embed: openai: URL %q must be an absolute http(s) URL", u.Redacted())
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/v1/embeddings"):
	case strings.HasSuffix(p, "/v1"):
		p += "/embeddings"
	default:
		p += "/v1/embeddings"
	}
	u.Path, u.RawPath = p, ""
	return u, nil
}

// Model returns "<model>-<dim>", so that a change of either calls for a
// reindex.
func (o *OpenAI) Model() string { return fmt.Sprintf("%s-%d", o.cfg.Model, o.cfg.Dim) }

// Dim returns the configured dimension.
func (o *OpenAI) Dim() int { return o.cfg.Dim }

// Embed embeds texts in batches of cfg.Batch, in order. Blank texts get the
// zero vector without a request (providers reject empty input). Either every
// vector is returned or none: a failed batch fails the call.
func (o *OpenAI) Embed(ctx context.Context, role Role, texts []string, _ map[string]float32) ([][]float32, error) {
	if role != Document && role != Query {
		return nil, fmt.Errorf("embed: unknown role %d", role)
	}
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*o.cfg.Dim)
	for i := range out {
		out[i] = backing[i*o.cfg.Dim : (i+1)*o.cfg.Dim : (i+1)*o.cfg.Dim]
	}
	pending := make([]int, 0, len(texts)) // indexes of texts to send
	for i, t := range texts {
		if strings.TrimSpace(t) != "" {
			pending = append(pending, i)
		}
	}
	for start := 0; start < len(pending); start += o.cfg.Batch {
		idx := pending[start:min(start+o.cfg.Batch, len(pending))]
		input := make([]string, len(idx))
		for j, i := range idx {
			input[j] = texts[i]
		}
		vecs, err := o.embedBatch(ctx, input)
		if err != nil {
			return nil, err
		}
		for j, i := range idx {
			copy(out[i], vecs[j])
			normalize(out[i])
		}
	}
	return out, nil
}

type embeddingsRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

// embedBatch sends one request, with retries, and returns its vectors in
// input order.
func (o *OpenAI) embedBatch(ctx context.Context, input []string) ([][]float32, error) {
	req := embeddingsRequest{Model: o.cfg.Model, Input: input}
	if o.cfg.SendDimensions {
		req.Dimensions = o.cfg.Dim
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("embed: encode request: %w", err)
	}
	raw, err := o.postWithRetry(ctx, body)
	if err != nil {
		return nil, err
	}
	return o.decode(raw, len(input))
}

// decode checks a response against the API and the configured dimension.
func (o *OpenAI) decode(raw []byte, n int) ([][]float32, error) {
	var resp embeddingsResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, o.malformed("decode JSON: %v", err)
	}
	if len(resp.Data) != n {
		return nil, o.malformed("%d embeddings for %d inputs", len(resp.Data), n)
	}
	vecs := make([][]float32, n)
	for _, d := range resp.Data {
		switch {
		case d.Index == nil:
			return nil, o.malformed("an embedding without an index")
		case *d.Index < 0 || *d.Index >= n:
			return nil, o.malformed("index %d out of range [0, %d)", *d.Index, n)
		case vecs[*d.Index] != nil:
			return nil, o.malformed("index %d repeated", *d.Index)
		case len(d.Embedding) != o.cfg.Dim:
			model := cmp.Or(resp.Model, o.cfg.Model)
			return nil, errs.Wrap(&DimensionError{Model: model, Want: o.cfg.Dim, Got: len(d.Embedding)},
				"embedding dimension mismatch")
		}
		vecs[*d.Index] = d.Embedding
	}
	return vecs, nil
}

// malformed is the typed error of a response that breaks the API.
func (o *OpenAI) malformed(format string, args ...any) error {
	return errs.Wrap(o.malformedCause(format, args...), "embedding request failed")
}

func (o *OpenAI) malformedCause(format string, args ...any) error {
	return fmt.Errorf("embed: POST %s: %w: %s", o.display, ErrMalformedResponse, fmt.Sprintf(format, args...))
}
