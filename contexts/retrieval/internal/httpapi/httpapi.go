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
	r.Get("/search", transport.Handler(h.search))
}

// search is GET /v1/search?query=&workarea=|session_id=&limit=.
func (h *Handlers) search(w http.ResponseWriter, r *http.Request) error {
	q, err := transport.Query(r, "query", "workarea", "session_id", "limit")
	if err != nil {
		return err
	}
	limit, err := transport.QueryInt(q, "limit")
	if err != nil {
		return err
	}
	hits, err := h.svc.Search(r.Context(), app.SearchQuery{Query: q["query"], Workarea: q["workarea"], SessionID: q["session_id"], Limit: limit})
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToSearchOut(hits))
	return nil
}

// readLog is GET /v1/read-log?key_id=&workarea=&cursor=&limit=.
func (h *Handlers) readLog(w http.ResponseWriter, r *http.Request) error {
	params, err := transport.Query(r, "key_id", "workarea", "cursor", "limit")
	if err != nil {
		return err
	}
	q := app.ReadLogQuery{KeyID: params["key_id"], Workarea: params["workarea"], Cursor: params["cursor"]}
	if q.Limit, err = transport.QueryInt(params, "limit"); err != nil {
		return err
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
