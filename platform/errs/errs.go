// Package errs is OML's error taxonomy: every refusal carries a dotted code,
// the rule that refused it, a message for the caller and whether a retry can
// succeed. One table maps codes to HTTP status; transport maps the same
// errors to MCP tool results.
package errs

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Code is a dotted error family, e.g. "access.not_found".
type Code string

// The codes of DESIGN.md (Errors). Families not listed here fall back by
// prefix in [HTTPStatus].
const (
	Validation       Code = "request.validation"
	RouteNotFound    Code = "request.not_found"
	MethodNotAllowed Code = "request.method_not_allowed"
	AuthMissing      Code = "auth.missing_key"
	AuthInvalid      Code = "auth.invalid_key"
	NotFound         Code = "access.not_found"
	VerbCeiling      Code = "access.verb_ceiling"
	Denied           Code = "access.denied"
	Banned           Code = "access.banned"
	BanExists        Code = "ban.exists"
	BadTransition    Code = "lifecycle.invalid_transition"
	Frozen           Code = "workarea.frozen"
	WorkareaConflict Code = "workarea.name_conflict"
	StatusLadder     Code = "workarea.status_ladder"
	EdgeExists       Code = "edge.exists"
	LimitCeiling     Code = "limit.ceiling"
	TenantExists     Code = "tenant.exists"
	IdempotencyClash Code = "idempotency.conflict"
	DigestMismatch   Code = "upload.digest_mismatch"
	UploadOutOfOrder Code = "upload.out_of_order"
	UploadPartRange  Code = "upload.part_range"
	UploadPartSize   Code = "upload.part_size"
	UploadPartDiffer Code = "upload.part_conflict"
	UploadPartCheck  Code = "upload.part_integrity"
	UploadClosed     Code = "upload.closed"
	UploadExpired    Code = "upload.expired"
	UploadBusy       Code = "upload.busy"
	LimitSize        Code = "limit.size"
	LimitQuota       Code = "limit.quota"
	LimitRate        Code = "limit.rate"
	ServeExpired     Code = "review.serve_expired"
	ServeConsumed    Code = "review.serve_consumed"
	ClosureBound     Code = "review.closure_bound"
	NotIndependent   Code = "review.not_independent"
	SuccessorExists  Code = "submission.successor_exists"
	Unavailable      Code = "service.unavailable"
	Internal         Code = "internal"
	ClaimKeyConflict Code = "submission.claim_key_conflict"
	LineageRequired  Code = "submission.lineage_required"
	ScanBlocked      Code = "submission.scan_blocked"
	SimulationFence  Code = "submission.simulation_fence"
	UploadUnusable   Code = "submission.upload_unusable"
	JournalBroken    Code = "journal.broken"
	InboxConflict    Code = "inbox.conflict"
	SessionConflict  Code = "session.conflict"
	PageConflict     Code = "knowledge.conflict"
	SimulationExists Code = "simulation.name_conflict"
	SimulationEnded  Code = "simulation.ended"
	internalMasked        = "internal error; it has been logged"
)

// Error is a typed refusal. Build one with [New] or the helpers below.
type Error struct {
	Code      Code
	Rule      string
	Message   string
	Retryable bool
	// RetryAfter is sent as the Retry-After header for retryable errors.
	RetryAfter time.Duration
	cause      error
}

// New returns a non-retryable error.
func New(code Code, rule, format string, args ...any) *Error {
	return &Error{Code: code, Rule: rule, Message: fmt.Sprintf(format, args...)}
}

// Retry returns a retryable error that tells the caller when to come back.
func Retry(code Code, rule string, after time.Duration, format string, args ...any) *Error {
	return &Error{Code: code, Rule: rule, Message: fmt.Sprintf(format, args...), Retryable: true, RetryAfter: after}
}

// Wrap returns an internal error carrying cause; its message is masked to
// clients and the cause is logged by the transport.
func Wrap(cause error, format string, args ...any) *Error {
	return &Error{
		Code:    Internal,
		Rule:    "internal invariant",
		Message: fmt.Sprintf(format, args...),
		cause:   cause,
	}
}

func (e *Error) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap exposes the cause of an internal error.
func (e *Error) Unwrap() error { return e.cause }

// Body is the wire shape of an error, shared by HTTP and MCP. A retryable
// error says when to come back; HTTP also sends it as Retry-After.
type Body struct {
	Code              Code   `json:"code"`
	Rule              string `json:"rule"`
	Message           string `json:"message"`
	Retryable         bool   `json:"retryable"`
	RetryAfterSeconds int    `json:"retry_after_seconds,omitempty"`
	// RequestID names the request in the server's logs (X-Request-Id),
	// for a report to an operator.
	RequestID string `json:"request_id,omitempty"`
}

// Envelope is the JSON document of a refusal: {"error": {...}}.
type Envelope struct {
	Error Body `json:"error"`
}

// From converts any error to a typed one. Untyped errors become internal
// errors whose cause is kept for logging.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Wrap(err, "unexpected error")
}

// Public returns what a client may see: internal messages are masked.
func (e *Error) Public() Body {
	b := Body{Code: e.Code, Rule: e.Rule, Message: e.Message, Retryable: e.Retryable}
	if e.Retryable && e.RetryAfter > 0 {
		b.RetryAfterSeconds = max(1, int((e.RetryAfter+time.Second-1)/time.Second))
	}
	if e.Code == Internal {
		b.Rule = "internal invariant"
		b.Message = internalMasked
	}
	return b
}

// Is reports whether err is a typed error with the given code.
func Is(err error, code Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// statusByCode is the one table from error code to HTTP status. Exact codes
// win over families; families are matched by the part before the dot.
var statusByCode = map[Code]int{
	Validation:       http.StatusBadRequest,
	RouteNotFound:    http.StatusNotFound,
	MethodNotAllowed: http.StatusMethodNotAllowed,
	NotFound:         http.StatusNotFound,
	VerbCeiling:      http.StatusForbidden,
	Denied:           http.StatusForbidden,
	Banned:           http.StatusForbidden,
	Frozen:           http.StatusConflict,
	IdempotencyClash: http.StatusConflict,
	DigestMismatch:   http.StatusConflict,
	UploadPartRange:  http.StatusBadRequest,
	UploadPartSize:   http.StatusBadRequest,
	UploadPartCheck:  http.StatusBadRequest,
	UploadExpired:    http.StatusGone,
	LimitSize:        http.StatusRequestEntityTooLarge,
	LimitQuota:       http.StatusTooManyRequests,
	LimitRate:        http.StatusTooManyRequests,
	LimitCeiling:     http.StatusUnprocessableEntity,
	ServeExpired:     http.StatusGone,
	ServeConsumed:    http.StatusConflict,
	ClosureBound:     http.StatusUnprocessableEntity,
	NotIndependent:   http.StatusForbidden,
	LineageRequired:  http.StatusUnprocessableEntity,
	ScanBlocked:      http.StatusUnprocessableEntity,
	SimulationFence:  http.StatusUnprocessableEntity,
	Unavailable:      http.StatusServiceUnavailable,
	JournalBroken:    http.StatusConflict,
	InboxConflict:    http.StatusConflict,
	PageConflict:     http.StatusConflict,
	SimulationExists: http.StatusConflict,
	SimulationEnded:  http.StatusConflict,
	Internal:         http.StatusInternalServerError,
}

var statusByFamily = map[string]int{
	"request":     http.StatusBadRequest,
	"auth":        http.StatusUnauthorized,
	"access":      http.StatusForbidden,
	"workarea":    http.StatusConflict,
	"submission":  http.StatusConflict,
	"idempotency": http.StatusConflict,
	"upload":      http.StatusConflict,
	"limit":       http.StatusTooManyRequests,
	"review":      http.StatusConflict,
	"tenant":      http.StatusConflict,
	"edge":        http.StatusConflict,
	"lifecycle":   http.StatusConflict,
	"ban":         http.StatusConflict,
	"session":     http.StatusConflict,
}

// HTTPStatus returns the status for a code.
func HTTPStatus(code Code) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	family, _, _ := strings.Cut(string(code), ".")
	if s, ok := statusByFamily[family]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Invalid is a request.validation refusal: the request does not match its schema.
func Invalid(format string, args ...any) *Error {
	return New(Validation, "request schema: bodies are strict JSON objects with known fields of the documented types", format, args...)
}
