// Package httpapi serves the upload routes and attachment downloads.
package httpapi

import (
	"io"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/attachments/internal/app"
	"github.com/omlhub/oml/contexts/attachments/internal/wire"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/metrics"
	"github.com/omlhub/oml/platform/transport"
)

// Handlers serve the routes.
type Handlers struct{ svc *app.Service }

// New returns the handlers.
func New(svc *app.Service) *Handlers { return &Handlers{svc: svc} }

// Routes registers the JSON routes on r (mounted at /v1).
func (h *Handlers) Routes(r chi.Router) {
	r.Post("/attachments/uploads", transport.Handler(h.open))
	r.Get("/attachments/uploads/{id}", transport.Handler(h.status))
	r.Delete("/attachments/uploads/{id}", transport.Handler(h.abort))
	r.Get("/attachments/limits", transport.Handler(h.limits))
	r.Put("/attachments/limits", transport.Handler(h.setLimits))
	r.Get("/artifacts/{id}/attachments/{sha256}", transport.Handler(h.download))
}

// StreamRoutes registers the part upload, which bounds its own body (a
// part is up to 64 MiB, beyond the JSON body limit).
func (h *Handlers) StreamRoutes(r chi.Router) {
	r.Put("/attachments/uploads/{id}/parts/{n}", transport.Handler(h.part))
}

func (h *Handlers) open(w http.ResponseWriter, r *http.Request) error {
	var in wire.OpenIn
	if err := transport.Decode(r, &in); err != nil {
		return err
	}
	s, err := h.svc.Open(r.Context(), in.Request())
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	transport.WriteJSON(w, http.StatusCreated, wire.FromSession(s))
	return nil
}

// status answers are never cached: a resuming client acts on them.
func (h *Handlers) status(w http.ResponseWriter, r *http.Request) error {
	s, err := h.svc.Status(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	transport.WriteJSON(w, http.StatusOK, wire.FromSession(s))
	return nil
}

func (h *Handlers) limits(w http.ResponseWriter, r *http.Request) error {
	l, err := h.svc.Limits(r.Context())
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, limitsOut(l))
	return nil
}

func (h *Handlers) setLimits(w http.ResponseWriter, r *http.Request) error {
	var in wire.LimitsIn
	if err := transport.Decode(r, &in); err != nil {
		return err
	}
	if in.MaxUploadBytes == nil {
		return errs.Invalid("max_upload_bytes is required (0 clears the tenant's ceiling)")
	}
	l, err := h.svc.SetLimit(r.Context(), *in.MaxUploadBytes)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, limitsOut(l))
	return nil
}

func limitsOut(l app.Limits) wire.LimitsOut {
	return wire.LimitsOut{MaxUploadBytes: l.MaxUploadBytes, DeploymentMaxUploadBytes: l.Deployment, TenantSet: l.TenantSet}
}

func (h *Handlers) abort(w http.ResponseWriter, r *http.Request) error {
	s, err := h.svc.Abort(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	transport.WriteJSON(w, http.StatusOK, wire.FromSession(s))
	return nil
}

func (h *Handlers) part(w http.ResponseWriter, r *http.Request) error {
	n, err := strconv.Atoi(chi.URLParam(r, "n"))
	if err != nil {
		return errs.New(errs.UploadPartRange, "parts are numbered 1..parts_expected", "part number must be an integer, got %q", chi.URLParam(r, "n"))
	}
	if r.ContentLength > 64<<20 {
		return errs.New(errs.LimitSize, "a part is at most 64 MiB", "part body of %d bytes is too large", r.ContentLength)
	}
	// A part may take minutes on a slow link: longer deadlines than the
	// server's default, still bounded.
	transport.ExtendDeadlines(w, transport.StreamTimeout, transport.StreamTimeout)
	body := &countedBody{r: r.Body}
	metrics.UploadsInFlight.Inc()
	defer func() {
		metrics.UploadsInFlight.Dec()
		metrics.UploadBytesInFlight.Sub(float64(body.n))
	}()
	s, err := h.svc.PutPart(r.Context(), app.Part{
		Session: chi.URLParam(r, "id"), N: n, Body: body, Length: r.ContentLength,
		ContentMD5: r.Header.Get("Content-MD5"), ContentDigest: r.Header.Get("Content-Digest"),
	})
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	transport.WriteJSON(w, http.StatusOK, wire.FromSession(s))
	return nil
}

// countedBody counts a part's bytes as they arrive, for /metrics.
type countedBody struct {
	r io.Reader
	n int64
}

func (c *countedBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.n += int64(n)
		metrics.UploadBytesInFlight.Add(float64(n))
		metrics.UploadBytes.Add(float64(n))
	}
	return n, err
}

// download streams an attachment's plaintext; http.ServeContent answers
// range and conditional requests from the decrypting reader.
func (h *Handlers) download(w http.ResponseWriter, r *http.Request) error {
	// Both deadlines: net/http cancels a request's context when the read
	// deadline passes, even after the body was read.
	transport.ExtendDeadlines(w, transport.StreamTimeout, transport.StreamTimeout)
	d, err := h.svc.OpenAttachment(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "sha256"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", d.MediaType)
	w.Header().Set("ETag", `"sha256:`+d.SHA256+`"`)
	w.Header().Set("Cache-Control", "private, no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Disposition", "attachment")
	http.ServeContent(w, r, "", noModTime, d.Reader)
	return nil
}
