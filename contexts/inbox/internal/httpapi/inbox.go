package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/inbox/internal/wire"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/transport"
)

// inbox is GET /v1/inbox: inbox_read's filters as query parameters.
func (h *Handlers) inbox(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	in := wire.InboxIn{Workarea: q.Get("workarea"), Status: q.Get("status"), Actor: q.Get("actor")}
	for name, dst := range map[string]*int64{"since": &in.Since} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return errs.Invalid("%s: want an integer, got %q", name, v)
			}
			*dst = n
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errs.Invalid("limit: want an integer, got %q", v)
		}
		in.Limit = n
	}
	// ?wait=SECONDS waits (at most 60 s) for an item after since to land.
	var wait time.Duration
	if v := q.Get("wait"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errs.Invalid("wait: want seconds (0–60), got %q", v)
		}
		wait = time.Duration(n) * time.Second
	}
	query := in.Query()
	switch q.Get("order") {
	case "", "oldest":
	case "newest":
		query.Newest = true
	default:
		return errs.Invalid("order: want oldest or newest, got %q", q.Get("order"))
	}
	p, err := h.svc.InboxWait(r.Context(), query, wait, false)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToInboxOut(p))
	return nil
}

type answerRequest struct {
	Body           string `json:"body"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// answer is POST /v1/inbox/{id}/answer {"body"}: an admin of the
// workarea answers a question.
func (h *Handlers) answer(w http.ResponseWriter, r *http.Request) error {
	var req answerRequest
	if err := transport.Decode(r, &req); err != nil {
		return err
	}
	key, err := transport.IdempotencyKey(r, req.IdempotencyKey)
	if err != nil {
		return err
	}
	out, err := wire.PostAnswer(r.Context(), h.svc, h.idem, wire.AnswerIn{QuestionID: chi.URLParam(r, "id"), Body: req.Body, IdempotencyKey: key}, true)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, out)
	return nil
}

// decide is POST /v1/inbox/{id}/decide {"decision", "note"}: an admin of
// the workarea decides an approval (HTTP only, R1).
func (h *Handlers) decide(w http.ResponseWriter, r *http.Request) error {
	var req wire.DecideIn
	if err := transport.Decode(r, &req); err != nil {
		return err
	}
	key, err := transport.IdempotencyKey(r, req.IdempotencyKey)
	if err != nil {
		return err
	}
	req.IdempotencyKey = key
	out, err := wire.Decide(r.Context(), h.svc, h.idem, chi.URLParam(r, "id"), req)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, out)
	return nil
}
