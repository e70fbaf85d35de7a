package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"runtime/debug"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/buildinfo"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/metrics"
)

// R1Message is the refusal for a tool that is not in the catalog. The MCP
// surface has no promote, sign, demote, delete or admin verb: absent, not
// refused (R1).
const R1Message = "Unknown tool: %s. This surface carries no promote, sign, demote, delete or admin verb (R1); see tools/list for the complete catalog."

const instructions = "OML is a governed shared memory. What you write is held until an identity " +
	"that did not write it ratifies it; recall returns promoted memory only, steering first. " +
	"Call oml_workarea_info before writing to see your effective verbs."

// Tools is the MCP tool catalog.
type Tools struct {
	server  *mcp.Server
	names   map[string]bool
	specs   map[string]ToolSpec
	res     *resources // the resources, once New added them
	log     *slog.Logger
	trailer *Trailer
	limiter Limiter
}

// ToolSpec describes a tool.
type ToolSpec struct {
	Name        string
	Title       string
	Description string
	ReadOnly    bool
	Idempotent  bool
}

func newTools(name string, log *slog.Logger, trailer *Trailer) *Tools {
	t := &Tools{
		server: mcp.NewServer(&mcp.Implementation{Name: name, Title: "OML", Version: buildinfo.Read().Version},
			&mcp.ServerOptions{
				Instructions: instructions,
				// Advertise only what a stateless server delivers: the SDK's
				// defaults add logging and tools.listChanged, and neither
				// notification can reach a client without a session.
				Capabilities: capabilities(),
			}),
		names:   map[string]bool{},
		specs:   map[string]ToolSpec{},
		log:     log,
		trailer: trailer,
	}
	// recoverPanics comes first, so it is outermost and covers every method,
	// tools/call and the other middleware included.
	t.server.AddReceivingMiddleware(t.recoverPanics, t.limitRequests, t.refuseUnknownTools, t.serveResources)
	Add(t, ToolSpec{
		Name: "version", Title: "Server version",
		Description: "Report the server version, for a connectivity check.",
		ReadOnly:    true, Idempotent: true,
	}, func(context.Context, struct{}) (buildinfo.Info, error) { return buildinfo.Read(), nil })
	return t
}

// serveResources answers resources/list and resources/read (resources.go),
// innermost: inside the panic guard and the key's rate limit.
func (t *Tools) serveResources(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if t.res != nil {
			if res, ok, err := t.res.handle(ctx, method, req); ok {
				return res, err
			}
		}
		return next(ctx, method, req)
	}
}

// capabilities are what the server advertises: tools, resources (no
// subscriptions or list-changed notices: a stateless server cannot send
// them), and the Skills extension, whose files are the skill:// resources.
func capabilities() *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}}
	c.AddExtension(skillExtension, map[string]any{"directories": []string{skillDir}})
	return c
}

// handler serves MCP over streamable HTTP in stateless JSON mode: no
// Mcp-Session-Id is issued (one sent is ignored), each POST is one request
// answered with application/json, and there is no SSE stream.
func (t *Tools) handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return t.server },
		&mcp.StreamableHTTPOptions{
			Stateless: true, JSONResponse: true, PropagateRequestCancellation: true,
			// The SDK's Host check answers a reverse proxy's Host with an
			// untyped 403; checkOrigin is the DNS-rebinding defence, typed.
			DisableLocalhostProtection: true,
			// bufferMCP has bounded the body already, typed
			// (OML_MAX_MCP_BODY_BYTES); the SDK's own 4 MiB bound would
			// refuse a 4 MiB brain value's envelope untyped.
			MaxRequestBodyBytes: -1,
		})
}

// recoverPanics turns a panic in any MCP method into a typed answer,
// logged with its stack and the request id. The SDK runs handlers on its
// own goroutine, outside observe's recover, so without this a bug in one
// tool would stop the replica. tools/call answers an isError result with
// code internal, like any tool failure; other methods a JSON-RPC internal
// error. Both are masked to the client.
func (t *Tools) recoverPanics(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			var tool string
			if c, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				tool = c.Name
			}
			t.log.ErrorContext(ctx, "panic", "request_id", RequestID(ctx), "method", method, "tool", tool,
				"panic", p, "stack", string(debug.Stack()))
			e := errs.Wrap(fmt.Errorf("panic: %v", p), "panic in %s", method)
			noteError(ctx, e)
			if method == "tools/call" {
				res, err = errorResultFor(ctx, e), nil
				return
			}
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: e.Public().Message}
		}()
		return next(ctx, method, req)
	}
}

// limitRequests takes one of the caller's key's requests for an MCP
// request other than tools/call (notifications aside: they cannot be
// answered), refusing with a JSON-RPC error naming limit.rate and the
// seconds. A tool call takes its token in the tool's own handler (Add), so
// that its refusal is a tool result the SDK completes like any other (in
// the 2026-07-28 era it carries resultType).
func (t *Tools) limitRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		c, ok := auth.From(ctx)
		if t.limiter == nil || !ok || method == "tools/call" || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		if err := t.limiter.Request(ctx, c); err != nil {
			noteError(ctx, errs.From(err))
			e := errs.From(err).Public()
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("%s: %s (retry in %d s)", e.Code, e.Message, e.RetryAfterSeconds)}
		}
		return next(ctx, method, req)
	}
}

func (t *Tools) refuseUnknownTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && !t.names[p.Name] {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(R1Message, p.Name)}
			}
		}
		return next(ctx, method, req)
	}
}

// Add registers a typed tool. Its input and output JSON schemas are derived
// from In and Out (see toolSchemas: plain types, and an output schema that
// admits the refusal envelope); arguments are decoded strictly (unknown
// fields, wrong types and missing required fields are request.validation
// refusals naming the field). A returned error becomes an isError result
// whose structured content is {"error": {code, rule, message, retryable}}.
func Add[In, Out any](t *Tools, spec ToolSpec, fn func(ctx context.Context, in In) (Out, error)) {
	inSchema, outSchema, err := toolSchemas[In, Out]()
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", spec.Name, err))
	}
	trailed := t.trailer.admit(outSchema.AnyOf[0])
	required := inSchema.Required
	fill := holdsSlice(reflect.TypeFor[Out](), map[reflect.Type]bool{})
	tool := &mcp.Tool{
		Name:         spec.Name,
		Title:        spec.Title,
		Description:  spec.Description,
		InputSchema:  inSchema,
		OutputSchema: outSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:          spec.Title,
			ReadOnlyHint:   spec.ReadOnly,
			IdempotentHint: spec.Idempotent,
			OpenWorldHint:  new(bool),
		},
	}
	calls := map[string]prometheus.Counter{}
	for _, o := range []string{"ok", "refused", "internal"} {
		calls[o] = metrics.ToolCalls.WithLabelValues(spec.Name, o)
	}
	took := metrics.ToolDuration.WithLabelValues(spec.Name)
	t.server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		start := time.Now()
		defer func() { countTool(calls, took, start, res) }()
		// A panic in the tool becomes its typed internal result here, inside
		// the SDK's tools/call path (recoverPanics is the backstop for the
		// rest); the replica goes on.
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				t.log.ErrorContext(ctx, "panic", "request_id", RequestID(ctx), "tool", spec.Name, "panic", p, "stack", string(debug.Stack()))
				res = t.errorResult(ctx, spec.Name, errs.Wrap(fmt.Errorf("panic: %v", p), "panic in %s", spec.Name))
			}
		}()
		if c, ok := auth.From(ctx); ok && t.limiter != nil {
			if err := t.limiter.Request(ctx, c); err != nil {
				return t.errorResult(ctx, spec.Name, err), nil
			}
		}
		var in In
		args := []byte(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		if err := DecodeJSON(args, &in); err != nil {
			return t.errorResult(ctx, spec.Name, err), nil
		}
		if err := missingRequired(args, required); err != nil {
			return t.errorResult(ctx, spec.Name, err), nil
		}
		if c, ok := auth.From(ctx); ok && !spec.ReadOnly && t.limiter != nil {
			if err := t.limiter.Write(ctx, c); err != nil {
				return t.errorResult(ctx, spec.Name, err), nil
			}
		}
		out, err := fn(ctx, in)
		if err != nil {
			return t.errorResult(ctx, spec.Name, err), nil
		}
		if fill {
			fillNilSlices(reflect.ValueOf(&out).Elem())
		}
		body, err := json.Marshal(out)
		if err != nil {
			return t.errorResult(ctx, spec.Name, fmt.Errorf("encode %s result: %w", spec.Name, err)), nil
		}
		res = &mcp.CallToolResult{}
		if trailed {
			body = t.applyTrailer(ctx, spec.Name, res, body)
		}
		res.StructuredContent = json.RawMessage(body)
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(body)}}
		return res, nil
	})
	t.names[spec.Name] = true
	t.specs[spec.Name] = spec
}

// countTool records a tool call's outcome and latency. It runs after the
// panic guard (deferred first), so a panic is counted as internal.
func countTool(calls map[string]prometheus.Counter, took prometheus.Observer, start time.Time, res *mcp.CallToolResult) {
	outcome := "ok"
	if res == nil || res.IsError {
		outcome = "refused"
		if res == nil || isInternal(res) {
			outcome = "internal"
		}
	}
	calls[outcome].Inc()
	metrics.Since(took, start)
}

func isInternal(res *mcp.CallToolResult) bool {
	var env struct {
		Error struct {
			Code errs.Code `json:"code"`
		} `json:"error"`
	}
	raw, ok := res.StructuredContent.(json.RawMessage)
	return ok && json.Unmarshal(raw, &env) == nil && env.Error.Code == errs.Internal
}

// ErrorResult is the MCP form of a typed refusal.
func ErrorResult(err error) *mcp.CallToolResult { return errorResultFor(context.Background(), err) }

// errorResultFor is [ErrorResult] naming ctx's request id.
func errorResultFor(ctx context.Context, err error) *mcp.CallToolResult {
	pub := errs.From(err).Public()
	pub.RequestID = RequestID(ctx)
	body, _ := json.Marshal(errs.Envelope{Error: pub})
	return &mcp.CallToolResult{
		IsError:           true,
		StructuredContent: json.RawMessage(body),
		Content:           []mcp.Content{&mcp.TextContent{Text: string(body)}},
	}
}

func (t *Tools) errorResult(ctx context.Context, tool string, err error) *mcp.CallToolResult {
	e := errs.From(err)
	noteError(ctx, e)
	if e.Code == errs.Internal {
		t.log.ErrorContext(ctx, "tool failed", "tool", tool, "request_id", RequestID(ctx), "error", e.Error())
	}
	return errorResultFor(ctx, e)
}
