package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cluster is the replicas, taken round-robin, and one MCP session per
// (replica, key), opened on first use.
type cluster struct {
	urls []string
	next atomic.Uint64
	http *http.Client
	// down holds, per replica, until when it is left out after a
	// transport failure (as a load balancer's health check would).
	down []atomic.Int64

	mu       sync.Mutex
	sessions map[string]*mcp.ClientSession
}

func newCluster(urls []string) *cluster {
	return &cluster{
		urls: urls,
		// Long enough for a slow recall under load, short enough that a
		// replica that stopped answering is left for the next.
		http:     &http.Client{Timeout: 30 * time.Second},
		sessions: map[string]*mcp.ClientSession{},
		down:     make([]atomic.Int64, len(urls)),
	}
}

// ejectFor is how long a replica that failed at the transport level is
// left out of the rotation.
const ejectFor = 2 * time.Second

// pick returns the next replica's URL, passing over those ejected after
// a transport failure (all ejected: the next one anyway).
func (c *cluster) pick() string {
	now := time.Now().UnixNano()
	for range c.urls {
		i := c.next.Add(1) % uint64(len(c.urls))
		if c.down[i].Load() < now {
			return c.urls[i]
		}
	}
	return c.urls[c.next.Add(1)%uint64(len(c.urls))]
}

// eject leaves base out of the rotation for a while.
func (c *cluster) eject(base string) {
	for i, u := range c.urls {
		if u == base {
			c.down[i].Store(time.Now().Add(ejectFor).UnixNano())
		}
	}
}

// outcome is how one attempt ended: ok, a typed refusal (code), or a
// failure with no typed answer (transport error, or a 5xx).
type outcome struct {
	Status int    // HTTP status (0: transport error or MCP)
	Code   string // the refusal's code, "" when ok
	Err    error  // transport failure
	// Retryable is the refusal's own retryable flag, or true for a
	// transport failure or 5xx.
	Retryable bool
}

func (o outcome) ok() bool { return o.Err == nil && o.Code == "" && o.Status < 500 }

// failed reports an attempt a client would retry on another replica: no
// answer, a 5xx, or a retryable refusal.
func (o outcome) failed() bool { return o.Err != nil || o.Status >= 500 || o.Retryable }

// label names the outcome in the report.
func (o outcome) label() string {
	switch {
	case o.Err != nil:
		return "transport"
	case o.Code != "":
		return o.Code
	case o.Status >= 500:
		return fmt.Sprintf("http_%d", o.Status)
	}
	return "ok"
}

type errorBody struct {
	Error struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	} `json:"error"`
}

// do sends one HTTP request to base and decodes a 2xx JSON answer into
// out (when non-nil).
func (c *cluster) do(ctx context.Context, base, method, path, key string, body any, out any, headers ...string) outcome {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return outcome{Err: err}
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return outcome{Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if _, raw := body.([]byte); !raw && body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.eject(base)
		return outcome{Err: err, Retryable: true}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return outcome{Status: resp.StatusCode, Err: err, Retryable: true}
	}
	o := outcome{Status: resp.StatusCode}
	if resp.StatusCode >= 300 {
		var eb errorBody
		if json.Unmarshal(data, &eb) == nil && eb.Error.Code != "" {
			o.Code, o.Retryable = eb.Error.Code, eb.Error.Retryable
		}
		if resp.StatusCode >= 500 {
			o.Retryable = true
		}
		return o
	}
	if out != nil && len(data) > 0 && resp.StatusCode != http.StatusNoContent {
		if err := json.Unmarshal(data, out); err != nil {
			return outcome{Status: resp.StatusCode, Err: fmt.Errorf("decode %s %s: %w", method, path, err)}
		}
	}
	return o
}

// session returns the MCP session for (base, key), connecting once.
func (c *cluster) session(ctx context.Context, base, key string) (*mcp.ClientSession, error) {
	id := base + "\x00" + key
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs, ok := c.sessions[id]; ok {
		return cs, nil
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "oml-load", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   base + "/mcp",
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: bearer{key: key}},
		// The server is stateless: no standalone SSE stream to hold.
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return nil, err
	}
	c.sessions[id] = cs
	return cs, nil
}

// forget drops a session after a transport failure, so the next use
// connects again (the replica may have restarted).
func (c *cluster) forget(base, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := base + "\x00" + key
	if cs, ok := c.sessions[id]; ok {
		_ = cs.Close()
		delete(c.sessions, id)
	}
}

func (c *cluster) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, cs := range c.sessions {
		_ = cs.Close()
		delete(c.sessions, id)
	}
}

// tool calls an MCP tool on base as key and decodes its structured result
// into out; a tool error is a typed refusal like an HTTP one.
func (c *cluster) tool(ctx context.Context, base, key, name string, args any, out any) outcome {
	cs, err := c.session(ctx, base, key)
	if err != nil {
		c.eject(base)
		return outcome{Err: err, Retryable: true}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.forget(base, key)
		c.eject(base)
		return outcome{Err: err, Retryable: true}
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return outcome{Err: err}
	}
	if res.IsError {
		var eb errorBody
		_ = json.Unmarshal(raw, &eb)
		code := eb.Error.Code
		if code == "" {
			code = "unknown"
		}
		return outcome{Code: code, Retryable: eb.Error.Retryable || code == "internal"}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return outcome{Err: fmt.Errorf("decode %s: %w", name, err)}
		}
	}
	return outcome{}
}

type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// retry runs attempt on successive replicas until it succeeds, is refused
// for good, or the deadline passes; it returns the last outcome and the
// number of attempts. Every attempt of one logical write carries the same
// idempotency key (or upload session), so a retry never writes twice.
func retry(ctx context.Context, c *cluster, deadline time.Duration, attempt func(base string) outcome) (outcome, int) {
	end := time.Now().Add(deadline)
	wait := 50 * time.Millisecond
	for n := 1; ; n++ {
		o := attempt(c.pick())
		if !o.failed() || time.Now().After(end) || ctx.Err() != nil {
			return o, n
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return o, n
		}
		wait = min(wait*2, time.Second)
	}
}
