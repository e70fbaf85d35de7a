package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/platform/transport"
)

// The API's JSON shapes the review pages read (docs/API.md, Review).
type queueRow struct {
	Workarea string    `json:"workarea"`
	Path     string    `json:"path"`
	Claims   int       `json:"claims"`
	Edges    int       `json:"edges"`
	Leased   int       `json:"leased"`
	Oldest   time.Time `json:"oldest"`
}

type queueOut struct {
	Workareas []queueRow `json:"workareas"`
	Claims    int        `json:"claims"`
	Edges     int        `json:"edges"`
}

type finding struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Offset  int    `json:"offset"`
}

type attachmentReview struct {
	SHA256     string    `json:"sha256"`
	MediaType  string    `json:"media_type"`
	SizeBytes  int64     `json:"size_bytes"`
	Review     string    `json:"review"`
	Text       string    `json:"text"`
	Truncated  bool      `json:"truncated"`
	Note       string    `json:"note"`
	Findings   []finding `json:"findings"`
	Provenance struct {
		UploadSession string     `json:"upload_session"`
		UploadedBy    string     `json:"uploaded_by"`
		CompletedAt   *time.Time `json:"completed_at"`
	} `json:"provenance"`
}

type servedItem struct {
	ArtifactID        string             `json:"artifact_id"`
	ClaimKey          string             `json:"claim_key"`
	Version           int                `json:"version"`
	Kind              string             `json:"kind"`
	Workarea          string             `json:"workarea"`
	Text              string             `json:"text"`
	DerivesFrom       []string           `json:"derives_from"`
	Lineage           []string           `json:"lineage_closure"`
	Findings          []finding          `json:"findings"`
	AttachmentReview  []attachmentReview `json:"attachment_review"`
	SubmittedAt       time.Time          `json:"submitted_at"`
	HeldExpiresAt     time.Time          `json:"held_expires_at"`
	Approvals         int                `json:"approvals"`
	RequiredApprovals int                `json:"required_approvals"`
}

type servedEdge struct {
	EdgeID     string    `json:"edge_id"`
	Kind       string    `json:"kind"`
	Label      string    `json:"label"`
	From       string    `json:"from"`
	To         string    `json:"to"`
	Note       string    `json:"note"`
	ProposedAt time.Time `json:"proposed_at"`
}

type serveOut struct {
	ServeID    string      `json:"serve_id"`
	ExpiresAt  time.Time   `json:"expires_at"`
	SelfSigned bool        `json:"self_signed"`
	Subject    string      `json:"subject"`
	Item       *servedItem `json:"item"`
	Edge       *servedEdge `json:"edge"`
}

type verdictOut struct {
	ServeID           string     `json:"serve_id"`
	ArtifactID        string     `json:"artifact_id"`
	EdgeID            string     `json:"edge_id"`
	Verdict           string     `json:"verdict"`
	State             string     `json:"state"`
	Approvals         int        `json:"approvals"`
	RequiredApprovals int        `json:"required_approvals"`
	SelfSigned        bool       `json:"self_signed"`
	PromotedAt        *time.Time `json:"promoted_at"`
}

type artifactOut struct {
	ArtifactID string  `json:"artifact_id"`
	Kind       string  `json:"kind"`
	State      string  `json:"state"`
	Workarea   string  `json:"workarea"`
	Text       *string `json:"text"`
}

type workareaOut struct {
	ID     string `json:"id"`
	Path   string `json:"path"`
	Status string `json:"status"`
	Parent string `json:"parent"`
	Crew   *struct {
		Name            string `json:"name"`
		CharterURI      string `json:"charter_uri"`
		ExternalManager string `json:"external_manager"`
	} `json:"crew"`
	Children []struct {
		ID       string `json:"id"`
		PathLeaf string `json:"path_leaf"`
		Status   string `json:"status"`
	} `json:"children"`
	Verbs []string `json:"my_effective_verbs"`
	Epoch int64    `json:"permission_epoch"`
}

// ancestor is one declared parent as the reviewer may see it.
type ancestor struct {
	ID      string
	Visible bool
	Kind    string
	State   string
	Path    string
	Text    string
	Refusal string
}

type itemPage struct {
	Serve     serveOut
	Path      string
	FromPath  string
	ToPath    string
	Ancestors []ancestor
	More      int
	Workarea  string // the subtree asked for, kept for "next"
	// Skip is what this reviewer passed over so far (comma-separated);
	// SkipAfter adds this item (a release).
	Skip, SkipAfter string
}

type queuePage struct {
	Queue    queueOut
	Empty    bool
	Reviewer bool
	Refusal  *refusal
}

// maxAncestors bounds the declared parents a served page looks up.
const maxAncestors = 20

// queue is GET /queue: what waits in each workarea the key reviews.
func (p *Pages) queue(w http.ResponseWriter, r *http.Request) {
	var q queueOut
	data := queuePage{Reviewer: true}
	if _, err := p.call(r, http.MethodGet, "/v1/reviews/queue", nil, &q); err != nil {
		ae, ok := err.(*apiError)
		if !ok || ae.Body.Code != "access.denied" {
			p.refuse(w, r, err)
			return
		}
		data.Reviewer = false
	}
	data.Queue, data.Empty = q, q.Claims+q.Edges == 0
	p.render(w, r, http.StatusOK, "queue", "Review queue", "queue", data)
}

// serve is POST /review/serve: the next item, optionally of one subtree.
func (p *Pages) serve(w http.ResponseWriter, r *http.Request) {
	workarea := strings.TrimSpace(r.PostForm.Get("workarea"))
	skip := skipList(r.PostForm.Get("skip"))
	body := map[string]any{}
	if workarea != "" {
		body["workarea"] = workarea
	}
	if len(skip) > 0 {
		body["skip"] = skip
	}
	var s serveOut
	ok, err := p.call(r, http.MethodPost, "/v1/reviews/serve", body, &s)
	if err != nil {
		p.refuse(w, r, err)
		return
	}
	if !ok {
		p.render(w, r, http.StatusOK, "empty", "Nothing to review", "queue", emptyPage{Workarea: workarea, Skipped: len(skip)})
		return
	}
	// Post/redirect/get: a reload shows this serve again, it never serves
	// another item.
	q := url.Values{}
	if workarea != "" {
		q.Set("workarea", workarea)
	}
	if len(skip) > 0 {
		q.Set("skip", strings.Join(skip, ","))
	}
	target := "/review/" + url.PathEscape(s.ServeID)
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

type emptyPage struct {
	Workarea string
	Skipped  int
}

// item is GET /review/{serve_id}: the served item, as GET
// /v1/reviews/{serve_id} shows it to its reviewer while the serve is open.
func (p *Pages) item(w http.ResponseWriter, r *http.Request) {
	var s serveOut
	if _, err := p.call(r, http.MethodGet, "/v1/reviews/"+url.PathEscape(chi.URLParam(r, "serve_id")), nil, &s); err != nil {
		p.refuse(w, r, err)
		return
	}
	workarea := r.URL.Query().Get("workarea")
	skip := skipList(r.URL.Query().Get("skip"))
	page := itemPage{Serve: s, Workarea: workarea, Skip: strings.Join(skip, ",")}
	if s.Item != nil {
		page.SkipAfter = strings.Join(append(skip, s.Item.ArtifactID), ",")
		page.Path = p.pathOf(r, s.Item.Workarea)
		for i, id := range s.Item.DerivesFrom {
			if i == maxAncestors {
				page.More = len(s.Item.DerivesFrom) - i
				break
			}
			page.Ancestors = append(page.Ancestors, p.ancestor(r, id))
		}
	}
	if s.Edge != nil {
		page.SkipAfter = strings.Join(append(skip, s.Edge.EdgeID), ",")
		page.FromPath, page.ToPath = p.endpoint(r, s.Edge.From), p.endpoint(r, s.Edge.To)
	}
	p.render(w, r, http.StatusOK, "item", "Review "+s.Subject, "queue", page)
}

// ancestor reads a declared parent as this key may see it.
func (p *Pages) ancestor(r *http.Request, id string) ancestor {
	var a artifactOut
	if _, err := p.call(r, http.MethodGet, "/v1/artifacts/"+url.PathEscape(id), nil, &a); err != nil {
		code := "internal"
		if ae, ok := err.(*apiError); ok {
			code = string(ae.Body.Code)
		}
		return ancestor{ID: id, Refusal: code}
	}
	out := ancestor{ID: id, Visible: true, Kind: a.Kind, State: a.State, Path: p.pathOf(r, a.Workarea)}
	if a.Text != nil {
		out.Text = *a.Text
	}
	return out
}

// endpoint names an edge endpoint: a claim's text or a workarea's path.
func (p *Pages) endpoint(r *http.Request, id string) string {
	if strings.HasPrefix(id, "wa_") {
		return p.pathOf(r, id)
	}
	a := p.ancestor(r, id)
	if !a.Visible {
		return id + " (" + a.Refusal + ")"
	}
	return a.Text
}

// pathOf returns a workarea's path, or its id when the key cannot read it.
func (p *Pages) pathOf(r *http.Request, id string) string {
	var wa workareaOut
	if _, err := p.call(r, http.MethodGet, "/v1/workareas/"+url.PathEscape(id), nil, &wa); err != nil {
		return id
	}
	return wa.Path
}

type resultPage struct {
	Verdict  verdictOut
	Released bool
	ServeID  string
	Workarea string
	Skip     string
}

// maxSkip is how many passed-over items a page carries (the API's bound).
const maxSkip = 100

// skipList reads a comma-separated skip list, keeping the newest maxSkip.
func skipList(s string) []string {
	var out []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	if len(out) > maxSkip {
		out = out[len(out)-maxSkip:]
	}
	return out
}

// verdict is POST /review/{serve_id}/verdict.
func (p *Pages) verdict(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "serve_id")
	body := map[string]string{"verdict": r.PostForm.Get("verdict")}
	if reason := strings.TrimSpace(r.PostForm.Get("reason")); reason != "" {
		body["reason"] = reason
	}
	var v verdictOut
	if _, err := p.call(r, http.MethodPost, "/v1/reviews/"+url.PathEscape(id)+"/verdict", body, &v); err != nil {
		p.refuse(w, r, err)
		return
	}
	p.render(w, r, http.StatusOK, "result", "Verdict recorded", "queue", resultPage{Verdict: v, ServeID: id, Workarea: r.PostForm.Get("workarea"),
		Skip: strings.Join(skipList(r.PostForm.Get("skip")), ",")})
}

// release is POST /review/{serve_id}/release: give the serve back. With
// next=1 the next item is served at once (the page's "skip").
func (p *Pages) release(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "serve_id")
	skipping := r.PostForm.Get("next") == "1"
	if _, err := p.call(r, http.MethodPost, "/v1/reviews/"+url.PathEscape(id)+"/release", map[string]string{}, nil); err != nil {
		// A skip goes on to the next item even when this serve already
		// ended (expired, or spent elsewhere): there is nothing to give back.
		ae, ok := err.(*apiError)
		if !skipping || !ok || (ae.Body.Code != "review.serve_expired" && ae.Body.Code != "review.serve_consumed") {
			p.refuse(w, r, err)
			return
		}
	}
	if skipping { // on to the next item, passing this one over
		p.serve(w, r)
		return
	}
	p.render(w, r, http.StatusOK, "result", "Serve released", "queue", resultPage{Released: true, ServeID: id, Workarea: r.PostForm.Get("workarea"),
		Skip: strings.Join(skipList(r.PostForm.Get("skip")), ",")})
}

// download streams an attachment through the API's access-checked,
// decrypting download route.
func (p *Pages) download(w http.ResponseWriter, r *http.Request) {
	s, _ := current(r)
	path := "/v1/artifacts/" + url.PathEscape(chi.URLParam(r, "id")) + "/attachments/" + url.PathEscape(chi.URLParam(r, "sha256"))
	req, err := http.NewRequestWithContext(transport.AsCaller(r.Context(), s.caller), http.MethodGet, path, http.NoBody)
	if err != nil {
		p.refuse(w, r, err)
		return
	}
	w.Header().Set("Content-Disposition", "attachment")
	p.api.ServeHTTP(w, req)
}
