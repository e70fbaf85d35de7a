// Package httpapi serves the sessions context's /v1 routes: the session
// listing, an admin's reassignment and prune of a session, and an admin's
// oversight read of a session's brain.
package httpapi

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/sessions/internal/app"
	"github.com/omlhub/oml/contexts/sessions/internal/domain"
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
	r.Get("/sessions/{id}/brain", transport.Handler(h.brain))
	r.Delete("/sessions/{id}/brain", transport.Handler(h.brainDelete))
}

// brainDelete is DELETE /v1/sessions/{id}/brain?path=&if_version=: the
// session's owner removes one entry (the MCP surface has no delete verb,
// R1).
func (h *Handlers) brainDelete(w http.ResponseWriter, r *http.Request) error {
	q, err := transport.Query(r, "path", "if_version")
	if err != nil {
		return err
	}
	id := chi.URLParam(r, "id")
	s, err := h.svc.BrainDelete(r.Context(), app.BrainRef{Store: domain.StoreSession, Session: id}, q["path"], q["if_version"])
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.BrainDeleteOut{Store: domain.StoreSession, SessionID: s.ID, Path: q["path"], Deleted: true})
	return nil
}

// brain is GET /v1/sessions/{id}/brain: one entry with path=, else a page
// of the listing (prefix, cursor, limit). Admin on the session's workarea;
// journalled.
func (h *Handlers) brain(w http.ResponseWriter, r *http.Request) error {
	q, err := transport.Query(r, "path", "prefix", "cursor", "limit")
	if err != nil {
		return err
	}
	limit, err := transport.QueryInt(q, "limit")
	if err != nil {
		return err
	}
	if q["path"] != "" && (q["prefix"] != "" || q["cursor"] != "" || q["limit"] != "") {
		return errs.Invalid("path reads one entry: prefix, cursor and limit page a listing")
	}
	page, one, err := h.svc.BrainOversight(r.Context(), chi.URLParam(r, "id"), q["path"], q["prefix"], q["cursor"], limit)
	if err != nil {
		return err
	}
	if one != nil {
		transport.WriteJSON(w, http.StatusOK, wire.ToBrainEntry(page.Session, *one))
		return nil
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToBrainList(page))
	return nil
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
