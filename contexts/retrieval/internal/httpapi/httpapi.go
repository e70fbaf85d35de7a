// Package httpapi serves POST /v1/recall.
package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/wire"
	"github.com/omlhub/oml/platform/transport"
)

// Handlers serve the routes.
type Handlers struct{ svc *app.Service }

// New returns the handlers.
func New(svc *app.Service) *Handlers { return &Handlers{svc: svc} }

// Routes registers the routes on r (mounted at /v1).
func (h *Handlers) Routes(r chi.Router) {
	r.Post("/recall", transport.Handler(h.recall))
}

func (h *Handlers) recall(w http.ResponseWriter, r *http.Request) error {
	var in wire.RecallIn
	if err := transport.Decode(r, &in); err != nil {
		return err
	}
	res, err := h.svc.Recall(r.Context(), in.ToQuery())
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToRecallOut(res))
	return nil
}
