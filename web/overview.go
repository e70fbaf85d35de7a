package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
)

// node is one workarea row of the overview tree.
type node struct {
	ID     string
	Path   string
	Leaf   string
	Status string
	Depth  int
	Claims int
	Edges  int
	Known  bool // the counts are known (the key reviews there)
}

type overviewPage struct {
	Nodes     []node
	Truncated bool
	Reviewer  bool
}

// maxTreeNodes bounds the overview's walk of the tree.
const maxTreeNodes = 200

// listedWorkareas is GET /v1/workareas's answer.
type listedWorkareas struct {
	Workareas []struct {
		ID     string `json:"id"`
		Path   string `json:"path"`
		Status string `json:"status"`
	} `json:"workareas"`
	NextCursor *string `json:"next_cursor"`
}

// overview is GET /overview: the workarea tree the key reads (GET
// /v1/workareas), with status and what waits for its review there.
func (p *Pages) overview(w http.ResponseWriter, r *http.Request) {
	var tree listedWorkareas
	if _, err := p.call(r, http.MethodGet, "/v1/workareas?limit="+strconv.Itoa(maxTreeNodes), nil, &tree); err != nil {
		p.refuse(w, r, err)
		return
	}
	counts := map[string]queueRow{}
	var q queueOut
	_, qerr := p.call(r, http.MethodGet, "/v1/reviews/queue", nil, &q)
	for _, row := range q.Workareas {
		counts[row.Workarea] = row
	}
	data := overviewPage{Reviewer: qerr == nil, Truncated: tree.NextCursor != nil}
	top := -1
	for _, wa := range tree.Workareas {
		d := strings.Count(wa.Path, ".")
		if top < 0 || d < top {
			top = d
		}
	}
	for _, wa := range tree.Workareas {
		c := counts[wa.ID]
		data.Nodes = append(data.Nodes, node{ID: wa.ID, Path: wa.Path, Leaf: leaf(wa.Path), Status: wa.Status,
			Depth: strings.Count(wa.Path, ".") - top, Claims: c.Claims, Edges: c.Edges, Known: data.Reviewer})
	}
	p.render(w, r, http.StatusOK, "overview", "Overview", "overview", data)
}

func leaf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[i+1:]
		}
	}
	return path
}

type tailEvent struct {
	Seq       int64          `json:"seq"`
	EventType string         `json:"event_type"`
	At        time.Time      `json:"at"`
	Actor     string         `json:"actor"`
	Hash      string         `json:"hash"`
	Subject   map[string]any `json:"subject"`
}

type tailOut struct {
	Events  []tailEvent `json:"events"`
	HeadSeq int64       `json:"head_seq"`
}

type verifyOut struct {
	Events  int64  `json:"events"`
	HeadSeq int64  `json:"head_seq"`
	OK      bool   `json:"ok"`
	BadSeq  int64  `json:"bad_seq"`
	Reason  string `json:"reason"`
	Refusal *refusal
}

type grantsOut struct {
	Grants []struct {
		GrantID    string    `json:"grant_id"`
		KeyID      string    `json:"key_id"`
		Principal  string    `json:"principal"`
		Scope      string    `json:"scope"`
		Effect     string    `json:"effect"`
		CreatedAt  time.Time `json:"created_at"`
		KeyRevoked bool      `json:"key_revoked"`
	} `json:"grants"`
	NextCursor *string `json:"next_cursor"`
}

type workareaPage struct {
	Workarea workareaOut
	Events   []tailEvent
	Admin    bool
	Grants   *grantsOut
	Verify   *verifyOut
}

// recentEvents is how many of the newest journal events the page scans.
const recentEvents = 500

// workarea is GET /workareas/{id}: crew, children, recent journal events.
func (p *Pages) workarea(w http.ResponseWriter, r *http.Request) {
	p.workareaWith(w, r, nil)
}

func (p *Pages) workareaWith(w http.ResponseWriter, r *http.Request, v *verifyOut) {
	id := chi.URLParam(r, "id")
	var wa workareaOut
	if _, err := p.call(r, http.MethodGet, "/v1/workareas/"+url.PathEscape(id), nil, &wa); err != nil {
		p.refuse(w, r, err)
		return
	}
	data := workareaPage{Workarea: wa, Verify: v}
	for _, verb := range wa.Verbs {
		data.Admin = data.Admin || verb == "admin"
	}
	if data.Admin {
		var g grantsOut
		if _, err := p.call(r, http.MethodGet, "/v1/grants?limit=500&workarea="+url.QueryEscape(wa.ID), nil, &g); err == nil {
			data.Grants = &g
		}
	}
	// The newest events: read the head, then the tail from before it.
	var head tailOut
	if _, err := p.call(r, http.MethodGet, "/v1/events?scope="+url.QueryEscape(wa.ID), nil, &head); err == nil {
		after := max(head.HeadSeq-recentEvents, 0)
		var t tailOut
		if _, err := p.call(r, http.MethodGet, "/v1/events?limit=500&scope="+url.QueryEscape(wa.ID)+"&after_seq="+strconv.FormatInt(after, 10), nil, &t); err == nil {
			ev := t.Events
			if len(ev) > 25 {
				ev = ev[len(ev)-25:]
			}
			for i, j := 0, len(ev)-1; i < j; i, j = i+1, j-1 {
				ev[i], ev[j] = ev[j], ev[i]
			}
			data.Events = ev
		}
	}
	p.render(w, r, http.StatusOK, "workarea", wa.Path, "overview", data)
}

// verify is POST /workareas/{id}/verify: recompute the tenant's chain
// (admin on universe) and show the result on the workarea page.
func (p *Pages) verify(w http.ResponseWriter, r *http.Request) {
	var v verifyOut
	if _, err := p.call(r, http.MethodGet, "/v1/admin/journal/verify", nil, &v); err != nil {
		if ae, ok := err.(*apiError); ok {
			v.Refusal = &refusal{Status: ae.Status, Code: string(ae.Body.Code), Rule: ae.Body.Rule, Message: ae.Body.Message, Words: words(string(ae.Body.Code))}
		} else {
			p.refuse(w, r, err)
			return
		}
	}
	p.workareaWith(w, r, &v)
}
