package wire

import (
	"strings"
	"time"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
)

// SearchIn is the input of search (and GET /v1/search).
type SearchIn struct {
	Query     string `json:"query" jsonschema:"what to look for, in plain words (web-search syntax: quotes, or, -word)"`
	Workarea  string `json:"workarea,omitempty" jsonschema:"a workarea (id or path): its subtree, within this key's read access"`
	SessionID string `json:"session_id,omitempty" jsonschema:"one of your own sessions: its brain's entries only"`
	Limit     int    `json:"limit,omitempty" jsonschema:"hits at most, 1–100 (default 20)"`
}

// ToQuery converts the input.
func (in SearchIn) ToQuery() app.SearchQuery {
	return app.SearchQuery{Query: in.Query, Workarea: in.Workarea, SessionID: in.SessionID, Limit: in.Limit}
}

// SearchHit is one hit.
type SearchHit struct {
	Family       string    `json:"family" jsonschema:"event (a feed event), page (a promoted knowledge-base page), document (a promoted document's version) or brain (an entry of your session brain)"`
	ID           string    `json:"id" jsonschema:"the event id, the page version's artifact id, or session_id:path"`
	Workarea     string    `json:"workarea"`
	WorkareaPath string    `json:"workarea_path"`
	Title        string    `json:"title" jsonschema:"the event kind, the page's path, /doc/<document id>, or the brain entry's path"`
	Snippet      string    `json:"snippet" jsonschema:"the matching text, matches between **"`
	Score        float64   `json:"score"`
	At           time.Time `json:"at"`
	Actor        string    `json:"actor,omitempty" jsonschema:"an event's author (principal)"`
	SessionID    string    `json:"session_id,omitempty" jsonschema:"a brain entry's session"`
	Path         string    `json:"path,omitempty" jsonschema:"a page's or brain entry's path"`
	DocumentID   string    `json:"document_id,omitempty" jsonschema:"a document hit's document (artifact_get's artifact_id)"`
}

// SearchOut is the answer of search.
type SearchOut struct {
	Hits []SearchHit `json:"hits"`
}

// ToSearchOut converts hits.
func ToSearchOut(hits []app.Hit) SearchOut {
	out := SearchOut{Hits: make([]SearchHit, len(hits))}
	for i, h := range hits {
		x := SearchHit{Family: h.Corpus, ID: h.ID, Workarea: h.WorkareaID, WorkareaPath: h.WorkareaPath, Title: h.Title,
			Snippet: h.Snippet, Score: h.Score, At: h.At.UTC(), SessionID: h.SessionID}
		switch h.Corpus {
		case app.CorpusEvent:
			x.Actor = h.Actor
		case app.CorpusPage, app.CorpusBrain:
			x.Path = h.Title
		case app.CorpusDocument:
			x.DocumentID = strings.TrimPrefix(h.Title, "/doc/")
		}
		out.Hits[i] = x
	}
	return out
}
