package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
)

// The inbox's JSON shapes (docs/API.md, Feed and inbox).
type inboxItem struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Workarea  string     `json:"workarea"`
	Status    string     `json:"status"`
	Body      string     `json:"body"`
	Options   []string   `json:"options"`
	Asker     string     `json:"asker"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	OnExpiry  string     `json:"on_expiry"`
	Expired   bool       `json:"expired"`
	Answer    *struct {
		Body    string    `json:"body"`
		By      string    `json:"by"`
		At      time.Time `json:"at"`
		Expired bool      `json:"expired"`
	} `json:"answer"`
	Decision *struct {
		Decision string    `json:"decision"`
		Note     string    `json:"note"`
		By       string    `json:"by"`
		At       time.Time `json:"at"`
		Expired  bool      `json:"expired"`
	} `json:"decision"`
	Seq  int64 `json:"seq"`
	Path string
}

type inboxOut struct {
	Items     []inboxItem `json:"items"`
	NextSince int64       `json:"next_since"`
}

type inboxPage struct {
	Open     []inboxItem
	Resolved []inboxItem
	Since    int64
}

// inboxLimit is how many items each section of the page shows.
const inboxLimit = 100

// inbox is GET /inbox: open questions and approvals, then resolved ones.
// With ?part=lists only the lists are rendered (the page's live update).
func (p *Pages) inbox(w http.ResponseWriter, r *http.Request) {
	var open, resolved inboxOut
	if _, err := p.call(r, http.MethodGet, "/v1/inbox?status=open&limit="+strconv.Itoa(inboxLimit), nil, &open); err != nil {
		p.refuse(w, r, err)
		return
	}
	if _, err := p.call(r, http.MethodGet, "/v1/inbox?status=resolved&order=newest&limit="+strconv.Itoa(inboxLimit), nil, &resolved); err != nil {
		p.refuse(w, r, err)
		return
	}
	// The newest item of any status is where the live update waits from.
	var head inboxOut
	if _, err := p.call(r, http.MethodGet, "/v1/inbox?order=newest&limit=1", nil, &head); err != nil {
		p.refuse(w, r, err)
		return
	}
	paths := map[string]string{}
	name := func(items []inboxItem) {
		for i := range items {
			id := items[i].Workarea
			if _, ok := paths[id]; !ok {
				paths[id] = p.pathOf(r, id)
			}
			items[i].Path = paths[id]
		}
	}
	name(open.Items)
	name(resolved.Items)
	data := inboxPage{Open: open.Items, Resolved: resolved.Items, Since: head.NextSince}
	if r.URL.Query().Get("part") == "lists" {
		p.renderPart(w, r, "inbox", "lists", data)
		return
	}
	p.render(w, r, http.StatusOK, "inbox", "Inbox", "inbox", data)
}

// inboxWait is GET /inbox/wait?since=N: the page's long-poll, on the same
// GET /v1/inbox?wait= agents and the CLI use. It answers JSON
// {"changed", "since"}.
func (p *Pages) inboxWait(w http.ResponseWriter, r *http.Request) {
	since, err := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
	if err != nil || since < 0 {
		since = 0
	}
	var out inboxOut
	q := url.Values{"since": {strconv.FormatInt(since, 10)}, "wait": {"25"}, "limit": {"500"}}
	w.Header().Set("Content-Type", "application/json")
	if _, err := p.call(r, http.MethodGet, "/v1/inbox?"+q.Encode(), nil, &out); err != nil {
		code := "internal"
		if ae, ok := err.(*apiError); ok {
			code = string(ae.Body.Code)
		} else {
			p.d.Logger.ErrorContext(r.Context(), "web: inbox wait", "err", err)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]any{"changed": false, "since": since, "error": code})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"changed": len(out.Items) > 0, "since": max(since, out.NextSince)})
}

// answer is POST /inbox/{id}/answer: an option button or a free text.
func (p *Pages) answer(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	body := strings.TrimSpace(r.PostForm.Get("option"))
	if body == "" {
		body = strings.TrimSpace(r.PostForm.Get("body"))
	}
	if _, err := p.call(r, http.MethodPost, "/v1/inbox/"+url.PathEscape(id)+"/answer", map[string]string{"body": body}, nil); err != nil {
		p.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, "/inbox#resolved-"+url.PathEscape(id), http.StatusSeeOther)
}

// decide is POST /inbox/{id}/decide: approve or decline with a note.
func (p *Pages) decide(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	body := map[string]any{"decision": r.PostForm.Get("decision")}
	if note := strings.TrimSpace(r.PostForm.Get("note")); note != "" {
		body["note"] = note
	}
	// An enrolment request's admission: the new key's role and grants.
	if role := r.PostForm.Get("role"); role != "" && body["decision"] == "approved" {
		body["role"] = role
		var grants []map[string]string
		for _, line := range strings.Split(r.PostForm.Get("grants"), "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			w, s, _ := strings.Cut(line, ":")
			grants = append(grants, map[string]string{"workarea": strings.TrimSpace(w), "scope": strings.TrimSpace(s)})
		}
		if grants != nil {
			body["grants"] = grants
		}
	}
	if _, err := p.call(r, http.MethodPost, "/v1/inbox/"+url.PathEscape(id)+"/decide", body, nil); err != nil {
		p.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, "/inbox#resolved-"+url.PathEscape(id), http.StatusSeeOther)
}
