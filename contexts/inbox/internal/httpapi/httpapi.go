// Package httpapi serves the inbox context's HTTP routes: GET /v1/events
// (the events tail) and the human's inbox (GET /v1/inbox, answer, decide).
package httpapi

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/wire"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/transport"
)

// Handlers serve the routes.
type Handlers struct {
	svc  *app.Service
	idem idempotency.Doer
}

// New returns the handlers.
func New(svc *app.Service, idem idempotency.Doer) *Handlers { return &Handlers{svc: svc, idem: idem} }

// Routes registers the routes (under /v1).
func (h *Handlers) Routes(r chi.Router) {
	r.Get("/events", transport.Handler(h.tail))
	r.Get("/inbox", transport.Handler(h.inbox))
	r.Post("/inbox/{id}/answer", transport.Handler(h.answer))
	r.Post("/inbox/{id}/decide", transport.Handler(h.decide))
}

func (h *Handlers) tail(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	in := wire.TailIn{Scope: q.Get("scope")}
	if v := q.Get("after_seq"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errs.Invalid("after_seq: want a journal sequence number, got %q", v)
		}
		in.AfterSeq = &n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errs.Invalid("limit: want an integer, got %q", v)
		}
		in.Limit = n
	}
	p, err := h.svc.Tail(r.Context(), in.Query())
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToTailOut(p))
	return nil
}
