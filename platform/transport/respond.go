package transport

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/idempotency"
)

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
	body.RequestID = RequestID(r.Context())
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
// when the header is absent; both set and different is a refusal. The
// header is checked here, by idempotency's own rule, because unlike a body
// field it can carry bytes that are not UTF-8.
func IdempotencyKey(r *http.Request, body string) (string, error) {
	h := r.Header.Get("Idempotency-Key")
	if err := idempotency.CheckKey(h); err != nil {
		return "", errs.Invalid("Idempotency-Key header: %s", errs.From(err).Message)
	}
	switch {
	case h == "":
		return body, nil
	case body == "" || body == h:
		return h, nil
	}
	return "", errs.Invalid("Idempotency-Key header and idempotency_key field differ")
}
