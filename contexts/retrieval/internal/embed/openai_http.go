package embed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

const (
	// maxResponseBytes bounds a response: 64 vectors of 4,096 floats as JSON
	// text take about 6 MB.
	maxResponseBytes = 64 << 20
	// maxErrorBody is how much of an error body is quoted in an error.
	maxErrorBody = 512
)

// Rules of the typed errors a caller may see.
const (
	ruleRate        = "embedding provider rate limit: the provider refused more requests for now"
	ruleUnavailable = "embedding provider availability: the provider timed out, failed or was unreachable"
)

// failure is one attempt's error and whether another attempt may succeed.
type failure struct {
	err         error
	retryable   bool
	rateLimited bool
	retryAfter  time.Duration // from the server; -1 when it sent none
}

// postWithRetry posts body and returns the response body of the first
// successful attempt. Retryable failures are retried with exponential backoff
// and jitter, honouring Retry-After; the final error is typed (see package
// errs): limit.rate or service.unavailable when retrying later may succeed,
// internal otherwise.
func (o *OpenAI) postWithRetry(ctx context.Context, body []byte) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		raw, f := o.post(ctx, body)
		if f == nil {
			return raw, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embed: POST %s: %w", o.display, context.Cause(ctx))
		}
		if !f.retryable {
			return nil, errs.Wrap(f.err, "embedding request failed")
		}
		wait := o.backoff(attempt)
		if f.retryAfter >= 0 {
			wait = min(f.retryAfter, o.cfg.MaxBackoff)
		}
		if attempt >= o.cfg.Retries {
			return nil, exhausted(f, wait, attempt+1)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("embed: POST %s: %w", o.display, err)
		}
	}
}

// exhausted is the error after the last retry: retryable, saying when to come
// back, with the last failure as cause.
func exhausted(f *failure, after time.Duration, attempts int) error {
	after = max(after, time.Second)
	var typed *errs.Error
	if f.rateLimited {
		typed = errs.Retry(errs.LimitRate, ruleRate, after,
			"the embedding provider is rate limiting requests (%d attempts); retry after %s", attempts, after.Round(time.Second))
	} else {
		typed = errs.Retry(errs.Unavailable, ruleUnavailable, after,
			"the embedding provider is unavailable (%d attempts); retry after %s", attempts, after.Round(time.Second))
	}
	// Both stay reachable: errors.As finds the typed error for transports and
	// the cause (URL, status) for logs.
	return fmt.Errorf("%w: %w", typed, f.err)
}

// post makes one attempt under the per-request timeout.
func (o *OpenAI) post(ctx context.Context, body []byte) ([]byte, *failure) {
	ctx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &failure{err: fmt.Errorf("embed: build request: %w", err), retryAfter: -1}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, o.transportFailure(ctx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, o.transportFailure(ctx, err)
	}
	if resp.StatusCode/100 == 2 {
		if len(raw) > maxResponseBytes {
			return nil, &failure{err: o.malformedCause("response larger than %d bytes", maxResponseBytes), retryAfter: -1}
		}
		return raw, nil
	}
	f := &failure{
		err:        &StatusError{URL: o.display, Status: resp.StatusCode, Body: o.excerpt(raw)},
		retryAfter: -1,
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		f.retryable, f.rateLimited = true, true
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode >= 500:
		f.retryable = true
	}
	if f.retryable {
		f.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return nil, f
}

// transportFailure classifies an error of sending or reading: the caller's
// cancellation is final, the rest (timeouts, refused or reset connections) is
// retryable.
func (o *OpenAI) transportFailure(ctx context.Context, err error) *failure {
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("embed: POST %s: timed out after %s", o.display, o.cfg.Timeout)
	} else {
		// *url.Error repeats the URL; keep only its cause.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		err = fmt.Errorf("embed: POST %s: %w", o.display, err)
	}
	return &failure{err: err, retryable: true, retryAfter: -1}
}

// excerpt quotes the start of an error body with the API key scrubbed, since
// some providers echo a rejected key.
func (o *OpenAI) excerpt(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > maxErrorBody {
		s = s[:maxErrorBody] + "…"
	}
	if o.cfg.APIKey != "" {
		s = strings.ReplaceAll(s, o.cfg.APIKey, "[redacted]")
	}
	return strings.ToValidUTF8(s, "")
}

// backoff is the wait before retry attempt+1: Backoff·2^attempt, capped at
// MaxBackoff, with "equal jitter" (half fixed, half random) so that clients
// failing together do not retry together.
func (o *OpenAI) backoff(attempt int) time.Duration {
	d := o.cfg.Backoff << min(attempt, 30)
	if d <= 0 || d > o.cfg.MaxBackoff {
		d = o.cfg.MaxBackoff
	}
	half := d / 2
	return half + rand.N(half+1)
}

// parseRetryAfter reads Retry-After as seconds or an HTTP date; -1 when it
// is absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return -1
		}
		return time.Duration(min(secs, 1<<31)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return -1
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
