// Package httpapi serves the knowledge context's /v1/kb routes, for the
// CLI and scripts: read, write, list, history, revert and delete (the
// MCP surface has no delete verb, R1).
package httpapi

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/knowledge/internal/app"
	"github.com/omlhub/oml/contexts/knowledge/internal/wire"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/transport"
)

// Handlers serve the routes.
type Handlers struct{ svc *app.Service }

// New returns the handlers.
func New(svc *app.Service) *Handlers { return &Handlers{svc: svc} }

// Routes registers the routes (under /v1).
func (h *Handlers) Routes(r chi.Router) {
	r.Get("/kb", transport.Handler(h.get))
	r.Put("/kb", transport.Handler(h.put))
	r.Delete("/kb", transport.Handler(h.delete))
	r.Get("/kb/history", transport.Handler(h.history))
	r.Post("/kb/revert", transport.Handler(h.revert))
}

// get is GET /v1/kb?workarea=&path=[&version=]: one page; without path,
// a listing (prefix, cursor, limit).
func (h *Handlers) get(w http.ResponseWriter, r *http.Request) error {
	q, err := transport.Query(r, "workarea", "path", "version", "prefix", "cursor", "limit")
	if err != nil {
		return err
	}
	if q["path"] == "" {
		if q["version"] != "" {
			return errs.Invalid("version reads one page: give its path")
		}
		limit, err := transport.QueryInt(q, "limit")
		if err != nil {
			return err
		}
		l, err := h.svc.List(r.Context(), q["workarea"], q["prefix"], q["cursor"], limit)
		if err != nil {
			return err
		}
		transport.WriteJSON(w, http.StatusOK, wire.ToList(l.WorkareaID, l.Versions, l.Next))
		return nil
	}
	if q["prefix"] != "" || q["cursor"] != "" || q["limit"] != "" {
		return errs.Invalid("path reads one page: prefix, cursor and limit page a listing")
	}
	p, err := h.svc.Get(r.Context(), q["workarea"], q["path"], q["version"])
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToPageRead(p))
	return nil
}

// put is PUT /v1/kb?workarea=&path=[&if_version=&stale_after=] with the
// page's bytes as the body (so a 1 MiB page fits the /v1 body bound): a
// page version, held for review (202).
func (h *Handlers) put(w http.ResponseWriter, r *http.Request) error {
	q, err := transport.Query(r, "workarea", "path", "if_version", "stale_after")
	if err != nil {
		return err
	}
	var stale *time.Time
	if q["stale_after"] != "" {
		t, err := time.Parse(time.RFC3339, q["stale_after"])
		if err != nil {
			return errs.Invalid("stale_after: want an RFC 3339 time")
		}
		stale = &t
	}
	body, err := transport.RawBody(r)
	if err != nil {
		return err
	}
	v, err := h.svc.Put(r.Context(), app.Put{Workarea: q["workarea"], Path: q["path"], Content: string(body),
		IfVersion: q["if_version"], StaleAfter: stale})
	if err != nil {
		return err
	}
	out := wire.ToPage(v, "")
	transport.WriteJSON(w, http.StatusAccepted, out)
	return nil
}

// delete is DELETE /v1/kb?workarea=&path=[&if_version=]: a deletion,
// held for review like any version (202).
func (h *Handlers) delete(w http.ResponseWriter, r *http.Request) error {
	q, err := transport.Query(r, "workarea", "path", "if_version")
	if err != nil {
		return err
	}
	v, err := h.svc.Delete(r.Context(), q["workarea"], q["path"], q["if_version"])
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusAccepted, wire.ToPage(v, ""))
	return nil
}

// history is GET /v1/kb/history?workarea=&path=[&cursor=&limit=].
func (h *Handlers) history(w http.ResponseWriter, r *http.Request) error {
	q, err := transport.Query(r, "workarea", "path", "cursor", "limit")
	if err != nil {
		return err
	}
	limit, err := transport.QueryInt(q, "limit")
	if err != nil {
		return err
	}
	l, err := h.svc.History(r.Context(), q["workarea"], q["path"], q["cursor"], limit)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToHistory(l.WorkareaID, q["path"], l.Versions, l.Next))
	return nil
}

// revert is POST /v1/kb/revert (202).
func (h *Handlers) revert(w http.ResponseWriter, r *http.Request) error {
	var in wire.RevertIn
	if err := transport.Decode(r, &in); err != nil {
		return err
	}
	v, err := h.svc.Revert(r.Context(), in.Workarea, in.Path, in.Version, in.IfVersion)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusAccepted, wire.ToPage(v, ""))
	return nil
}
