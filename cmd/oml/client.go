package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/omlhub/oml/platform/errs"
)

// errNoKey is returned before any request when no key was given: every
// route but the health checks refuses anonymous calls anyway.
var errNoKey = errors.New("no API key: pass --key or set OML_API_KEY")

// maxResponse bounds what the CLI reads of one response; the largest
// admin answers (key lists, tool catalogs) are far below it.
const maxResponse = 32 << 20

// APIError is a typed refusal from the server: the body of its error
// envelope {"error": {code, rule, message, retryable}} and the HTTP status.
type APIError struct {
	Status int
	errs.Body
	// RetryAfter is the Retry-After header of a retryable refusal, if any.
	RetryAfter string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: %s (rule: %s)", e.Code, e.Message, e.Rule)
}

// client talks to the /v1 HTTP API with one bearer key.
type client struct {
	base string // scheme://host[:port][/prefix], no trailing slash
	key  string
	http *http.Client
}

// api returns a client for the global flags, or errNoKey.
func (c *cli) api() (*client, error) {
	if c.key == "" {
		return nil, errNoKey
	}
	base, err := baseURL(c.url)
	if err != nil {
		return nil, err
	}
	// No client timeout: --timeout bounds the whole command through ctx.
	return &client{base: base, key: c.key, http: &http.Client{}}, nil
}

func baseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("server URL %q: want http(s)://host[:port]", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// do sends one JSON request to path (which starts with /v1/) and decodes
// the response into out: nothing if out is nil, the raw bytes if out is a
// *json.RawMessage. A non-2xx answer is returned as *APIError.
func (c *client) do(ctx context.Context, method, path string, body any, out any) error {
	return c.doWith(ctx, method, path, nil, body, out)
}

// rawBody is a request body sent as it is (a page's bytes), not as JSON.
type rawBody string

// doWith is do with extra request headers (Idempotency-Key).
func (c *client) doWith(ctx context.Context, method, path string, header http.Header, body any, out any) error {
	var payload io.Reader
	contentType := "application/json"
	if raw, ok := body.(rawBody); ok {
		payload, contentType, body = strings.NewReader(string(raw)), "text/plain; charset=utf-8", nil
	}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		payload = bytes.NewReader(b)
	}
	target := c.base + path
	req, err := http.NewRequestWithContext(ctx, method, target, payload)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, target, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if c.key != "" { // enrolment is the one call without a key
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		// url.Error repeats the method and URL in its own words; say them once.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%s %s: %w", method, target, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("%s %s: read response: %w", method, target, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return responseError(method, target, resp, data)
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *json.RawMessage:
		*o = data
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode response: %w", method, target, err)
	}
	return nil
}

// responseError turns a non-2xx response into *APIError when it carries
// the error envelope, and into a plain error naming the status otherwise
// (a proxy's HTML page, say).
func responseError(method, target string, resp *http.Response, data []byte) error {
	var env errs.Envelope
	if json.Unmarshal(data, &env) == nil && env.Error.Code != "" {
		return &APIError{Status: resp.StatusCode, Body: env.Error, RetryAfter: resp.Header.Get("Retry-After")}
	}
	snippet := strings.TrimSpace(string(data))
	if len(snippet) > 200 {
		snippet = snippet[:200] + "…"
	}
	if snippet == "" {
		return fmt.Errorf("%s %s: HTTP %s", method, target, resp.Status)
	}
	return fmt.Errorf("%s %s: HTTP %s: %s", method, target, resp.Status, snippet)
}
