// Package httpapi serves POST /v1/recall and GET /v1/read-log.
package httpapi

import (
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/wire"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/transport"
)

// Handlers serve the routes.
type Handlers struct{ svc *app.Service }

// New returns the handlers.
func New(svc *app.Service) *Handlers { return &Handlers{svc: svc} }

// Routes registers the routes on r (mounted at /v1).
func (h *Handlers) Routes(r chi.Router) {
	r.Post("/recall", transport.Handler(h.recall))
	r.Get("/read-log", transport.Handler(h.readLog))
}

// readLog is GET /v1/read-log?key_id=&workarea=&cursor=&limit=.
func (h *Handlers) readLog(w http.ResponseWriter, r *http.Request) error {
	var q app.ReadLogQuery
	for name, vals := range r.URL.Query() {
		if len(vals) != 1 {
			return errs.Invalid("GET /v1/read-log: %s given %d times", name, len(vals))
		}
		v := vals[0]
		switch name {
		case "key_id":
			q.KeyID = v
		case "workarea":
			q.Workarea = v
		case "cursor":
			q.Cursor = v
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil {
				return errs.Invalid("limit: want an integer, got %q", v)
			}
			q.Limit = n
		default:
			return errs.Invalid("GET /v1/read-log: unknown parameter %q (want key_id, workarea, cursor, limit)", name)
		}
	}
	page, err := h.svc.ListReadLog(r.Context(), q)
	if err != nil {
		return err
	}
	type read struct {
		ID          string    `json:"id"`
		KeyID       string    `json:"key_id"`
		Workarea    string    `json:"workarea"`
		Operation   string    `json:"operation"`
		QuerySHA256 string    `json:"query_sha256"`
		Returned    []string  `json:"returned"`
		At          time.Time `json:"at"`
	}
	out := make([]read, len(page.Rows))
	for i, row := range page.Rows {
		returned := row.Returned
		if returned == nil {
			returned = []string{}
		}
		out[i] = read{ID: strconv.FormatInt(row.ID, 10), KeyID: row.KeyID, Workarea: row.WorkareaID, Operation: row.Operation,
			QuerySHA256: hex.EncodeToString(row.QuerySHA256), Returned: returned, At: row.At.UTC()}
	}
	var next *string
	if page.NextCursor != "" {
		next = &page.NextCursor
	}
	w.Header().Set("Cache-Control", "no-store")
	transport.WriteJSON(w, http.StatusOK, map[string]any{"reads": out, "next_cursor": next})
	return nil
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
