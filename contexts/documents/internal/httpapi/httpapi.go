// Package httpapi serves the documents context's /v1 routes for the CLI
// and scripts: publish, update, read and list documents, and delete a
// comment (the MCP surface has no delete verb, R1).
package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/documents/internal/app"
	"github.com/omlhub/oml/contexts/documents/internal/wire"
	"github.com/omlhub/oml/platform/transport"
)

// Handlers serve the routes.
type Handlers struct{ svc *app.Service }

// New returns the handlers.
func New(svc *app.Service) *Handlers { return &Handlers{svc: svc} }

// Routes registers the routes (under /v1).
func (h *Handlers) Routes(r chi.Router) {
	r.Post("/documents", transport.Handler(h.publish))
	r.Get("/documents", transport.Handler(h.list))
	r.Get("/documents/{id}", transport.Handler(h.get))
	r.Post("/documents/{id}/versions", transport.Handler(h.update))
	r.Delete("/comments/{id}", transport.Handler(h.deleteComment))
}

func (h *Handlers) publish(w http.ResponseWriter, r *http.Request) error {
	var in wire.PublishIn
	if err := transport.Decode(r, &in); err != nil {
		return err
	}
	v, err := h.svc.Publish(r.Context(), in.Publish())
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusAccepted, wire.ToDocument(v, false))
	return nil
}

// update is POST /v1/documents/{id}/versions with artifact_update's
// fields (artifact_id taken from the path).
func (h *Handlers) update(w http.ResponseWriter, r *http.Request) error {
	var in wire.UpdateIn
	if err := transport.Decode(r, &in); err != nil {
		return err
	}
	v, err := h.svc.Update(r.Context(), app.Update{ID: chi.URLParam(r, "id"), Content: in.Content, BaseVersion: in.BaseVersion,
		Force: in.Force, Meta: wire.Meta(in.Title, in.Description, in.Label)})
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusAccepted, wire.ToDocument(v, false))
	return nil
}

func (h *Handlers) get(w http.ResponseWriter, r *http.Request) error {
	q, err := transport.Query(r, "version")
	if err != nil {
		return err
	}
	v, err := h.svc.Get(r.Context(), chi.URLParam(r, "id"), q["version"])
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToDocument(v, true))
	return nil
}

func (h *Handlers) list(w http.ResponseWriter, r *http.Request) error {
	q, err := transport.Query(r, "workarea", "session_id", "cursor", "limit")
	if err != nil {
		return err
	}
	limit, err := transport.QueryInt(q, "limit")
	if err != nil {
		return err
	}
	vs, next, err := h.svc.List(r.Context(), q["workarea"], q["session_id"], q["cursor"], limit)
	if err != nil {
		return err
	}
	out := wire.ListOut{Artifacts: make([]wire.Document, len(vs))}
	for i, v := range vs {
		out.Artifacts[i] = wire.ToDocument(v, false)
	}
	if next != "" {
		out.NextCursor = &next
	}
	transport.WriteJSON(w, http.StatusOK, out)
	return nil
}

// deleteComment is DELETE /v1/comments/{id}, with the comment's delete
// token in X-Delete-Token or writer access on the document's workarea.
func (h *Handlers) deleteComment(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := h.svc.DeleteComment(r.Context(), id, r.Header.Get("X-Delete-Token")); err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, map[string]any{"comment_id": id, "deleted": true})
	return nil
}
