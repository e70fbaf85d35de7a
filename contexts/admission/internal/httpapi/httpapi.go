// Package httpapi serves the admission context's /v1 routes: submissions,
// own work, artifacts, the serve ceremony (HTTP only, never MCP), review
// policies and the signing key.
package httpapi

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/admission/internal/app"
	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/contexts/admission/internal/wire"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/transport"
)

// Handlers serve the routes.
type Handlers struct {
	svc    *app.Service
	idem   idempotency.Doer
	public ed25519.PublicKey
}

// New returns the handlers.
func New(svc *app.Service, idem idempotency.Doer, public ed25519.PublicKey) *Handlers {
	return &Handlers{svc: svc, idem: idem, public: public}
}

// Routes registers the routes on r (mounted at /v1).
func (h *Handlers) Routes(r chi.Router) {
	r.Post("/memories", transport.Handler(h.submit))
	r.Get("/memories/mine", transport.Handler(h.mine))
	r.Get("/artifacts/{id}", transport.Handler(h.artifact))
	r.Get("/reviews/queue", transport.Handler(h.queue))
	r.Post("/reviews/serve", transport.Handler(h.serve))
	r.Post("/reviews/{serve_id}/verdict", transport.Handler(h.verdict))
	r.Post("/reviews/{serve_id}/release", transport.Handler(h.release))
	r.Get("/reviews/{serve_id}", transport.Handler(h.showServe))
	r.Get("/workareas/{id}/review-policy", transport.Handler(h.getPolicy))
	r.Put("/workareas/{id}/review-policy", transport.Handler(h.putPolicy))
	r.Put("/review-settings", transport.Handler(h.putSettings))
	r.Get("/signing-key", transport.Handler(h.signingKey))
	r.Post("/artifacts/{id}/demote", transport.Handler(h.lifecycle(h.svc.Demote)))
	r.Post("/artifacts/{id}/erase", transport.Handler(h.lifecycle(h.svc.Erase)))
}

// lifecycle serves demote and erase: {"reason"} → the claim's tombstone or
// new state.
func (h *Handlers) lifecycle(verb func(ctx context.Context, id, reason string) (domain.Claim, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req struct {
			Reason string `json:"reason"`
		}
		if err := transport.Decode(r, &req); err != nil {
			return err
		}
		c, err := verb(r.Context(), chi.URLParam(r, "id"), req.Reason)
		if err != nil {
			return err
		}
		transport.WriteJSON(w, http.StatusOK, map[string]any{
			"artifact_id": c.ID, "claim_key": c.ClaimKey, "version": c.Version, "state": c.State, "workarea": c.WorkareaID,
		})
		return nil
	}
}

func (h *Handlers) submit(w http.ResponseWriter, r *http.Request) error {
	var in wire.MemoryIn
	if err := transport.Decode(r, &in); err != nil {
		return err
	}
	key, err := transport.IdempotencyKey(r, in.IdempotencyKey)
	if err != nil {
		return err
	}
	out, err := wire.Submit(r.Context(), h.svc, h.idem, in, key)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusCreated, out.Body())
	return nil
}

func (h *Handlers) mine(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errs.Invalid("limit: want an integer, got %q", v)
		}
		limit = n
	}
	page, err := h.svc.MyWork(r.Context(), app.Mine{Workarea: q.Get("workarea"), State: q.Get("state"), Limit: limit, Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToMyWork(page))
	return nil
}

func (h *Handlers) artifact(w http.ResponseWriter, r *http.Request) error {
	v, err := h.svc.Artifact(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToArtifact(v.Claim, v.Parents, v.Author))
	return nil
}

// release gives a serve back: → {"serve_id", "released_at"}.
func (h *Handlers) release(w http.ResponseWriter, r *http.Request) error {
	var empty struct{}
	if err := transport.DecodeOptional(r, &empty); err != nil {
		return err
	}
	srv, err := h.svc.Release(r.Context(), chi.URLParam(r, "serve_id"))
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, map[string]any{"serve_id": srv.ID, "released_at": srv.ConsumedAt.UTC()})
	return nil
}

// queueRow is one workarea of GET /v1/reviews/queue.
type queueRow struct {
	Workarea string    `json:"workarea"`
	Path     string    `json:"path"`
	Claims   int       `json:"claims"`
	Edges    int       `json:"edges"`
	Leased   int       `json:"leased"`
	Oldest   time.Time `json:"oldest"`
}

// queue answers what waits for the caller per workarea it reviews, oldest
// first, with the totals.
func (h *Handlers) queue(w http.ResponseWriter, r *http.Request) error {
	entries, err := h.svc.Queue(r.Context())
	if err != nil {
		return err
	}
	rows := make([]queueRow, len(entries))
	var claims, edges int
	for i, e := range entries {
		rows[i] = queueRow{Workarea: e.Workarea.ID, Path: e.Workarea.Path, Claims: e.Claims, Edges: e.Edges, Leased: e.Leased, Oldest: e.Oldest.UTC()}
		claims, edges = claims+e.Claims, edges+e.Edges
	}
	w.Header().Set("Cache-Control", "no-store")
	transport.WriteJSON(w, http.StatusOK, map[string]any{"workareas": rows, "claims": claims, "edges": edges})
	return nil
}

// servedItem is what a reviewer is shown with its serve.
type servedItem struct {
	ArtifactID        string             `json:"artifact_id"`
	ClaimKey          string             `json:"claim_key"`
	Version           int                `json:"version"`
	Kind              string             `json:"kind"`
	Workarea          string             `json:"workarea"`
	Text              string             `json:"text"`
	DerivesFrom       []string           `json:"derives_from"`
	Lineage           []string           `json:"lineage_closure"`
	Findings          []wire.Finding     `json:"findings"`
	Attachments       []wire.Attachment  `json:"attachments"`
	AttachmentReview  []attachmentReview `json:"attachment_review"`
	SubmittedAt       time.Time          `json:"submitted_at"`
	HeldExpiresAt     time.Time          `json:"held_expires_at"`
	Approvals         int                `json:"approvals"`
	RequiredApprovals int                `json:"required_approvals"`
}

// attachmentReview is what a reviewer reads for one attachment.
type attachmentReview struct {
	wire.Attachment
	Review     string         `json:"review"` // text, pdf_text, opaque or unavailable
	Text       string         `json:"text,omitempty"`
	Truncated  bool           `json:"truncated,omitempty"`
	Note       string         `json:"note,omitempty"`
	Findings   []wire.Finding `json:"findings"`
	Provenance provenance     `json:"provenance"`
}

type provenance struct {
	UploadSession string     `json:"upload_session,omitempty"`
	UploadedBy    string     `json:"uploaded_by,omitempty"`
	CompletedAt   *time.Time `json:"completed_at,omitempty"`
}

func toReview(in []app.ReviewMaterial) []attachmentReview {
	out := make([]attachmentReview, len(in))
	for i, m := range in {
		out[i] = attachmentReview{
			Attachment: wire.Attachment(m.Attachment), Review: m.Kind, Text: m.Text, Truncated: m.Truncated, Note: m.Note,
			Findings:   wire.ToFindings(m.Findings),
			Provenance: provenance{UploadSession: m.UploadSession, UploadedBy: m.UploadedBy, CompletedAt: m.CompletedAt},
		}
	}
	return out
}

// servedEdge is a pending edge shown for ratification.
type servedEdge struct {
	EdgeID     string    `json:"edge_id"`
	Kind       string    `json:"kind"`
	Label      string    `json:"label"`
	From       string    `json:"from"`
	To         string    `json:"to"`
	Note       string    `json:"note,omitempty"`
	ProposedAt time.Time `json:"proposed_at"`
}

// serveResponse leases a claim (subject "claim", item) or an edge
// (subject "edge", edge).
type serveResponse struct {
	ServeID    string      `json:"serve_id"`
	ExpiresAt  time.Time   `json:"expires_at"`
	SelfSigned bool        `json:"self_signed"`
	Subject    string      `json:"subject"`
	Item       *servedItem `json:"item,omitempty"`
	Edge       *servedEdge `json:"edge,omitempty"`
}

// serve leases the next eligible item; 204 when there is none.
func (h *Handlers) serve(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Workarea string `json:"workarea"` // optional: serve from this subtree only
		// optional: claims (art_…) and edges this reviewer passes over
		// this time (a skip), at most 100
		Skip []string `json:"skip"`
	}
	if err := transport.DecodeOptional(r, &req); err != nil {
		return err
	}
	s, ok, err := h.svc.ServeNextIn(r.Context(), req.Workarea, req.Skip)
	if err != nil {
		return err
	}
	if !ok {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	transport.WriteJSON(w, http.StatusOK, toServeResponse(s))
	return nil
}

// showServe is GET /v1/reviews/{serve_id}: an open serve shown to its
// reviewer again.
func (h *Handlers) showServe(w http.ResponseWriter, r *http.Request) error {
	s, err := h.svc.ShowServe(r.Context(), chi.URLParam(r, "serve_id"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	transport.WriteJSON(w, http.StatusOK, toServeResponse(s))
	return nil
}

func toServeResponse(s app.Served) serveResponse {
	out := serveResponse{ServeID: s.Serve.ID, ExpiresAt: s.Serve.ExpiresAt.UTC(), SelfSigned: s.Serve.SelfSigned}
	if e := s.Edge; e != nil {
		out.Subject = "edge"
		out.Edge = &servedEdge{EdgeID: e.ID, Kind: e.Kind, Label: e.Label, From: e.From, To: e.To, Note: e.Note, ProposedAt: e.ProposedAt.UTC()}
		return out
	}
	c := s.Claim
	out.Subject = "claim"
	out.Item = &servedItem{
		ArtifactID: c.ID, ClaimKey: c.ClaimKey, Version: c.Version, Kind: string(c.Kind), Workarea: c.WorkareaID,
		Text: c.Text, DerivesFrom: orEmpty(s.Parents), Lineage: orEmpty(s.Serve.Closure),
		Findings: wire.ToFindings(c.Findings), Attachments: wire.ToAttachments(c.Attachments), AttachmentReview: toReview(s.Material),
		SubmittedAt: c.SubmittedAt.UTC(), HeldExpiresAt: c.HeldExpiresAt.UTC(),
		Approvals: c.Approvals, RequiredApprovals: c.RequiredApprovals,
	}
	return out
}

type verdictRequest struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
}

type verdictResponse struct {
	ServeID           string     `json:"serve_id"`
	ArtifactID        string     `json:"artifact_id,omitempty"`
	EdgeID            string     `json:"edge_id,omitempty"`
	Verdict           string     `json:"verdict"`
	State             string     `json:"state"`
	Approvals         int        `json:"approvals"`
	RequiredApprovals int        `json:"required_approvals"`
	SelfSigned        bool       `json:"self_signed"`
	PromotedAt        *time.Time `json:"promoted_at,omitempty"`
}

func (h *Handlers) verdict(w http.ResponseWriter, r *http.Request) error {
	var req verdictRequest
	if err := transport.Decode(r, &req); err != nil {
		return err
	}
	serveID := chi.URLParam(r, "serve_id")
	d, err := h.svc.Verdict(r.Context(), serveID, req.Verdict, req.Reason)
	if err != nil {
		return err
	}
	if e := d.Edge; e != nil {
		transport.WriteJSON(w, http.StatusOK, verdictResponse{ServeID: serveID, EdgeID: e.ID, Verdict: string(d.Verdict), State: e.State})
		return nil
	}
	c := d.Claim
	out := verdictResponse{
		ServeID: serveID, ArtifactID: c.ID, Verdict: string(d.Verdict), State: string(c.State),
		Approvals: c.Approvals, RequiredApprovals: c.RequiredApprovals, SelfSigned: c.SelfSigned,
	}
	if c.PromotedAt != nil {
		t := c.PromotedAt.UTC()
		out.PromotedAt = &t
	}
	transport.WriteJSON(w, http.StatusOK, out)
	return nil
}

type policyBody struct {
	RequiredApprovals     int    `json:"required_approvals"`
	HeldTTLSeconds        int64  `json:"held_ttl_seconds"`
	Scan                  string `json:"scan"`
	SelfSignedDevelopment bool   `json:"self_signed_development"`
	Workarea              string `json:"workarea"`
}

func toPolicyBody(w app.Workarea, p domain.Policy) policyBody {
	return policyBody{
		RequiredApprovals: p.RequiredApprovals, HeldTTLSeconds: int64(p.HeldTTL / time.Second), Scan: string(p.Scan),
		SelfSignedDevelopment: p.SelfSignedDevelopment, Workarea: w.ID,
	}
}

func (h *Handlers) getPolicy(w http.ResponseWriter, r *http.Request) error {
	wa, p, err := h.svc.PolicyAt(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, toPolicyBody(wa, p))
	return nil
}

type putPolicyRequest struct {
	RequiredApprovals int    `json:"required_approvals"`
	HeldTTLSeconds    int64  `json:"held_ttl_seconds"`
	Scan              string `json:"scan"`
}

func (h *Handlers) putPolicy(w http.ResponseWriter, r *http.Request) error {
	var req putPolicyRequest
	if err := transport.Decode(r, &req); err != nil {
		return err
	}
	p := domain.Policy{RequiredApprovals: req.RequiredApprovals, HeldTTL: time.Duration(req.HeldTTLSeconds) * time.Second, Scan: domain.ScanPolicy(req.Scan)}
	wa, p, err := h.svc.SetPolicy(r.Context(), chi.URLParam(r, "id"), p)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, toPolicyBody(wa, p))
	return nil
}

func (h *Handlers) putSettings(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		SelfSignedDevelopment *bool `json:"self_signed_development"`
	}
	if err := transport.Decode(r, &req); err != nil {
		return err
	}
	if req.SelfSignedDevelopment == nil {
		return errs.Invalid("self_signed_development is required")
	}
	if err := h.svc.SetSelfSignedDevelopment(r.Context(), *req.SelfSignedDevelopment); err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, map[string]bool{"self_signed_development": *req.SelfSignedDevelopment})
	return nil
}

// signingKey publishes the deployment's Ed25519 public key, so anyone can
// verify a submission envelope.
func (h *Handlers) signingKey(w http.ResponseWriter, r *http.Request) error {
	sum := sha256.Sum256(h.public)
	transport.WriteJSON(w, http.StatusOK, map[string]string{
		"algorithm":  "Ed25519",
		"public_key": base64.StdEncoding.EncodeToString(h.public),
		"key_id":     hex.EncodeToString(sum[:8]),
		"signs":      "the canonical JSON bytes of each artifact's envelope (RFC 8785 style); signatures are base64",
	})
	return nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
