// Package httpapi serves the lineage context's /v1 routes: edge proposals
// and the scoped graph read.
package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/lineage/internal/app"
	"github.com/omlhub/oml/contexts/lineage/internal/wire"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/transport"
)

// Handlers serve the routes.
type Handlers struct{ svc *app.Service }

// New returns the handlers.
func New(svc *app.Service) *Handlers { return &Handlers{svc: svc} }

// Routes registers the routes on r (mounted at /v1).
func (h *Handlers) Routes(r chi.Router) {
	r.Post("/edges", transport.Handler(h.propose))
	r.Get("/graph", transport.Handler(h.graph))
}

func (h *Handlers) propose(w http.ResponseWriter, r *http.Request) error {
	var in wire.ProposeIn
	if err := transport.Decode(r, &in); err != nil {
		return err
	}
	e, err := h.svc.Propose(r.Context(), in.Proposal())
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusCreated, wire.ToProposeOut(e))
	return nil
}

func (h *Handlers) graph(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	gq := app.GraphQuery{Scope: q.Get("scope"), Cursor: q.Get("cursor")}
	if roots := q.Get("roots"); roots != "" {
		gq.Roots = strings.Split(roots, ",")
	}
	for name, dst := range map[string]*int{"depth": &gq.Depth, "limit": &gq.Limit} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return errs.Invalid("%s: want an integer, got %q", name, v)
			}
			*dst = n
		}
	}
	g, err := h.svc.Graph(r.Context(), gq)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToGraphOut(g))
	return nil
}
