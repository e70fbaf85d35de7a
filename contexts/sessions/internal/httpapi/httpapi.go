// Package httpapi serves the sessions context's /v1 routes: the session
// listing and an admin's reassignment of a running session.
package httpapi

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/sessions/internal/app"
	"github.com/omlhub/oml/contexts/sessions/internal/wire"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/transport"
)

// Handlers serve the routes.
type Handlers struct{ svc *app.Service }

// New returns the handlers.
func New(svc *app.Service) *Handlers { return &Handlers{svc: svc} }

// Routes registers the routes (under /v1).
func (h *Handlers) Routes(r chi.Router) {
	r.Get("/sessions", transport.Handler(h.list))
	r.Post("/sessions/{id}/reassign", transport.Handler(h.reassign))
	r.Post("/sessions/{id}/prune", transport.Handler(h.prune))
}

// prune takes no body (an empty object is accepted).
func (h *Handlers) prune(w http.ResponseWriter, r *http.Request) error {
	s, err := h.svc.Prune(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToSession(s))
	return nil
}

func (h *Handlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	in := wire.ListIn{Workarea: q.Get("workarea"), Status: q.Get("status"), Cursor: q.Get("cursor")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errs.Invalid("limit: want an integer, got %q", v)
		}
		in.Limit = n
	}
	p, err := h.svc.List(r.Context(), in.Query())
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToListOut(p))
	return nil
}

func (h *Handlers) reassign(w http.ResponseWriter, r *http.Request) error {
	var in wire.ReassignIn
	if err := transport.Decode(r, &in); err != nil {
		return err
	}
	s, err := h.svc.Reassign(r.Context(), chi.URLParam(r, "id"), in.ToKeyID)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToSession(s))
	return nil
}
