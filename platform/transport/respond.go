package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/omlhub/oml/platform/errs"
)

// Decode reads r's body as one strict JSON object into dst: unknown
// fields, wrong types, trailing data and oversized bodies are typed
// refusals (request.validation, limit.size).
func Decode(r *http.Request, dst any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return bodyTooLarge(tooBig.Limit)
		}
		return errs.Invalid("could not read the request body: %v", err)
	}
	return DecodeJSON(body, dst)
}

// DecodeJSON is [Decode] on bytes (MCP tool arguments use it too).
func DecodeJSON(data []byte, dst any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return errs.Invalid("empty body: send a JSON object")
	}
	if data[0] != '{' {
		return errs.Invalid("the body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return errs.Invalid("the body holds more than one JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errs.Invalid("the body holds data after the JSON object")
	}
	return nil
}

func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return errs.Invalid("malformed JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "(root)"
		}
		return errs.Invalid("field %q: want %s, got JSON %s", field, typeName(typ.Type.String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errs.Invalid("malformed JSON: unexpected end of input")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errs.Invalid("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return errs.Invalid("malformed JSON: %v", err)
}

func typeName(goType string) string {
	switch {
	case goType == "string" || goType == "*string":
		return "a string"
	case strings.Contains(goType, "int"):
		return "an integer"
	case goType == "bool" || goType == "*bool":
		return "a boolean"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map[") || strings.Contains(goType, "."):
		return "an object"
	}
	return goType
}

func bodyTooLarge(limit int64) error {
	return errs.New(errs.LimitSize, "request bodies are bounded (OML_MAX_BODY_BYTES)",
		"the request body exceeds %d bytes", limit)
}

// WriteJSON writes v with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, `{"error":{"code":"internal","rule":"internal invariant","message":"internal error; it has been logged","retryable":false}}`, http.StatusInternalServerError)
		return
	}
	WriteRaw(w, status, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// WriteRaw writes an already encoded JSON body.
func WriteRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}

// Error writes err as a typed refusal. Internal causes are masked and
// handed to the access log.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	e := errs.From(err)
	noteError(r.Context(), e)
	if e.Code == errs.AuthMissing || e.Code == errs.AuthInvalid {
		w.Header().Set("WWW-Authenticate", `Bearer realm="oml"`)
	}
	body := e.Public()
	if body.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(body.RetryAfterSeconds))
	}
	WriteJSON(w, errs.HTTPStatus(e.Code), errs.Envelope{Error: body})
}

// Handler adapts a handler that returns an error.
func Handler(fn func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			Error(w, r, err)
		}
	}
}

// IdempotencyKey returns the request's Idempotency-Key header, or body
// when the header is absent; both set and different is a refusal.
func IdempotencyKey(r *http.Request, body string) (string, error) {
	h := r.Header.Get("Idempotency-Key")
	switch {
	case h == "":
		return body, nil
	case body == "" || body == h:
		return h, nil
	}
	return "", errs.Invalid("Idempotency-Key header and idempotency_key field differ")
}
