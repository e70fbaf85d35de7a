// Package httpapi serves the access context's /v1 routes: workareas, keys,
// grants, whoami and the admin journal check.
package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/wire"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/transport"
)

// Handlers serve the routes.
type Handlers struct {
	svc      *app.Service
	idem     idempotency.Doer
	guideURL string
}

// New returns the handlers.
func New(svc *app.Service, idem idempotency.Doer, guideURL string) *Handlers {
	return &Handlers{svc: svc, idem: idem, guideURL: guideURL}
}

// Routes registers the routes on r (mounted at /v1).
func (h *Handlers) Routes(r chi.Router) {
	r.Get("/workareas", transport.Handler(h.listWorkareas))
	r.Get("/workareas/{id}", transport.Handler(h.getWorkarea))
	r.Post("/workareas", transport.Handler(h.createWorkarea))
	r.Patch("/workareas/{id}", transport.Handler(h.patchWorkarea))
	r.Post("/keys", transport.Handler(h.issueKey))
	r.Get("/keys", transport.Handler(h.listKeys))
	r.Delete("/keys/{id}", transport.Handler(h.revokeKey))
	r.Post("/grants", transport.Handler(h.addGrant))
	r.Delete("/grants/{id}", transport.Handler(h.removeGrant))
	r.Get("/grants", transport.Handler(h.listGrants))
	r.Get("/whoami", transport.Handler(h.whoami))
	r.Get("/admin/journal/verify", transport.Handler(h.verifyJournal))
	r.Post("/bans", transport.Handler(h.addBan))
	r.Get("/bans", transport.Handler(h.listBans))
	r.Delete("/bans/{id}", transport.Handler(h.liftBan))
	r.Post("/web/sign-in-codes", transport.Handler(h.webCode))
	r.Get("/quotas", transport.Handler(h.getQuotas))
	r.Put("/quotas", transport.Handler(h.putQuotas))
}

// WebCodeTTL is how long a one-time web sign-in code stays usable.
const WebCodeTTL = 10 * time.Minute

// webCode mints a one-time code that signs a browser in as the calling
// key: the link carries the code, never the key.
func (h *Handlers) webCode(w http.ResponseWriter, r *http.Request) error {
	if err := transport.DecodeOptional(r, &struct{}{}); err != nil {
		return err
	}
	out, err := h.svc.IssueWebCode(r.Context(), WebCodeTTL)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusCreated, map[string]any{
		"code": out.Token, "path": "/sign-in/code?code=" + out.Token, "expires_at": out.ExpiresAt.UTC(),
	})
	return nil
}

type banBody struct {
	BanID     string     `json:"ban_id"`
	Principal string     `json:"principal,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	CreatedAt *time.Time `json:"created_at,omitempty"`
	LiftedAt  *time.Time `json:"lifted_at"`
}

func toBanBody(b app.Ban) banBody {
	out := banBody{BanID: b.ID, Principal: b.Principal.Name, Reason: b.Reason, LiftedAt: b.LiftedAt}
	if !b.CreatedAt.IsZero() {
		t := b.CreatedAt.UTC()
		out.CreatedAt = &t
	}
	return out
}

func (h *Handlers) addBan(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Principal string `json:"principal"`
		Reason    string `json:"reason"`
	}
	if err := transport.Decode(r, &req); err != nil {
		return err
	}
	b, err := h.svc.AddBan(r.Context(), req.Principal, req.Reason)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusCreated, toBanBody(b))
	return nil
}

func (h *Handlers) listBans(w http.ResponseWriter, r *http.Request) error {
	bans, err := h.svc.ListBans(r.Context())
	if err != nil {
		return err
	}
	out := struct {
		Bans []banBody `json:"bans"`
	}{Bans: make([]banBody, len(bans))}
	for i, b := range bans {
		out.Bans[i] = toBanBody(b)
	}
	transport.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handlers) liftBan(w http.ResponseWriter, r *http.Request) error {
	b, err := h.svc.LiftBan(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, toBanBody(b))
	return nil
}

func (h *Handlers) getWorkarea(w http.ResponseWriter, r *http.Request) error {
	info, err := h.svc.WorkareaInfo(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToWorkareaInfo(info))
	return nil
}

type createWorkareaRequest struct {
	Parent         string     `json:"parent"`
	Name           string     `json:"name"`
	Status         string     `json:"status,omitempty"`
	Crew           *wire.Crew `json:"crew,omitempty"`
	IdempotencyKey string     `json:"idempotency_key,omitempty"`
}

func (h *Handlers) createWorkarea(w http.ResponseWriter, r *http.Request) error {
	var req createWorkareaRequest
	if err := transport.Decode(r, &req); err != nil {
		return err
	}
	res, err := h.once(r, "workarea.create", req.Parent, &req.IdempotencyKey, &req, func(ctx context.Context) (any, error) {
		info, err := h.svc.CreateWorkarea(ctx, app.CreateWorkarea{Parent: req.Parent, Name: req.Name, Status: req.Status, Crew: wire.FromCrew(req.Crew)})
		if err != nil {
			return nil, err
		}
		return wire.ToWorkareaInfo(info), nil
	})
	if err != nil {
		return err
	}
	transport.WriteRaw(w, http.StatusCreated, res.Response())
	return nil
}

// once runs a write under the caller's idempotency key, if it sent one
// (the Idempotency-Key header or the body's idempotency_key, which *bodyKey
// points at and which is cleared so it is no part of the request hash). The
// record is scoped to (key, workarea, operation); workareaRef is resolved
// to its id first ("" for tenant-level operations).
func (h *Handlers) once(r *http.Request, op, workareaRef string, bodyKey *string, req any, write func(ctx context.Context) (any, error)) (idempotency.Result, error) {
	key, err := transport.IdempotencyKey(r, *bodyKey)
	if err != nil {
		return idempotency.Result{}, err
	}
	*bodyKey = ""
	ctx := r.Context()
	c, _ := auth.From(ctx)
	scope := idempotency.Scope{TenantID: c.TenantID, KeyID: c.KeyID, Operation: op, Key: key}
	if key != "" && workareaRef != "" {
		id, err := h.svc.WorkareaID(ctx, workareaRef)
		if err != nil {
			return idempotency.Result{}, err
		}
		scope.Workarea = id
	}
	return h.idem.Do(ctx, scope, req, write)
}

type patchWorkareaRequest struct {
	Status string          `json:"status,omitempty"`
	Crew   json.RawMessage `json:"crew,omitempty"`
}

func (h *Handlers) patchWorkarea(w http.ResponseWriter, r *http.Request) error {
	var req patchWorkareaRequest
	if err := transport.Decode(r, &req); err != nil {
		return err
	}
	cmd := app.UpdateWorkarea{Ref: chi.URLParam(r, "id"), Status: req.Status}
	if req.Crew != nil {
		cmd.SetCrew = true
		if string(req.Crew) != "null" {
			var crew wire.Crew
			if err := transport.DecodeNested(req.Crew, &crew); err != nil {
				return err
			}
			cmd.Crew = wire.FromCrew(&crew)
		}
	}
	info, err := h.svc.UpdateWorkarea(r.Context(), cmd)
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToWorkareaInfo(info))
	return nil
}

type issueKeyRequest struct {
	Principal      string `json:"principal"`
	Role           string `json:"role"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

type issueKeyResponse struct {
	KeyID            string `json:"key_id"`
	Token            string `json:"token,omitempty"`
	Principal        string `json:"principal"`
	Role             string `json:"role"`
	IdempotentReplay *bool  `json:"idempotent_replay,omitempty"` // only to re-encode a stored body
}

// issueKey mints a key. Under an idempotency key a retry returns the same
// key without its token: the token is shown once and never stored.
func (h *Handlers) issueKey(w http.ResponseWriter, r *http.Request) error {
	var req issueKeyRequest
	if err := transport.Decode(r, &req); err != nil {
		return err
	}
	var token string
	res, err := h.once(r, "key.issue", "", &req.IdempotencyKey, &req, func(ctx context.Context) (any, error) {
		k, err := h.svc.IssueKey(ctx, req.Principal, req.Role)
		if err != nil {
			return nil, err
		}
		token = k.Token
		return issueKeyResponse{KeyID: k.Key.ID, Principal: k.Key.Principal.Name, Role: string(k.Key.Role)}, nil // stored without the token
	})
	if err != nil {
		return err
	}
	var out issueKeyResponse
	if err := json.Unmarshal(res.Response(), &out); err != nil {
		return err
	}
	out.Token = token
	transport.WriteJSON(w, http.StatusCreated, out)
	return nil
}

func (h *Handlers) listKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := h.svc.ListKeys(r.Context())
	if err != nil {
		return err
	}
	out := struct {
		Keys []wire.Key `json:"keys"`
	}{Keys: make([]wire.Key, len(keys))}
	for i, k := range keys {
		out.Keys[i] = wire.ToKey(k)
	}
	transport.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handlers) revokeKey(w http.ResponseWriter, r *http.Request) error {
	res, err := h.svc.RevokeKey(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, struct {
		wire.Key
		PermissionEpoch int64 `json:"permission_epoch"`
	}{wire.ToKey(res.Key), res.Epoch})
	return nil
}

type addGrantRequest struct {
	KeyID          string `json:"key_id"`
	Workarea       string `json:"workarea"`
	Scope          string `json:"scope"`
	Effect         string `json:"effect"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

type grantResponse struct {
	GrantID         string `json:"grant_id"`
	PermissionEpoch int64  `json:"permission_epoch"`
	KeyID           string `json:"key_id"`
	Workarea        string `json:"workarea"`
	Scope           string `json:"scope"`
	Effect          string `json:"effect"`
	Created         bool   `json:"created"`
}

func toGrantResponse(g app.GrantResult) grantResponse {
	return grantResponse{
		GrantID: g.Grant.ID, PermissionEpoch: g.Epoch, KeyID: g.Grant.KeyID, Workarea: g.Grant.WorkareaID,
		Scope: g.Grant.Scope.String(), Effect: string(g.Grant.Effect), Created: g.Created,
	}
}

func (h *Handlers) addGrant(w http.ResponseWriter, r *http.Request) error {
	var req addGrantRequest
	if err := transport.Decode(r, &req); err != nil {
		return err
	}
	res, err := h.once(r, "grant.add", req.Workarea, &req.IdempotencyKey, &req, func(ctx context.Context) (any, error) {
		g, err := h.svc.AddGrant(ctx, app.AddGrant{KeyID: req.KeyID, Workarea: req.Workarea, Scope: req.Scope, Effect: req.Effect})
		if err != nil {
			return nil, err
		}
		return toGrantResponse(g), nil
	})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	var created struct {
		Created bool `json:"created"`
	}
	if json.Unmarshal(res.Body, &created) == nil && !created.Created {
		status = http.StatusOK
	}
	transport.WriteRaw(w, status, res.Response())
	return nil
}

func (h *Handlers) removeGrant(w http.ResponseWriter, r *http.Request) error {
	g, err := h.svc.RemoveGrant(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, struct {
		GrantID         string `json:"grant_id"`
		PermissionEpoch int64  `json:"permission_epoch"`
		Removed         bool   `json:"removed"`
	}{g.Grant.ID, g.Epoch, true})
	return nil
}

func (h *Handlers) whoami(w http.ResponseWriter, r *http.Request) error {
	who, err := h.svc.Whoami(r.Context())
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, wire.ToWhoami(who, h.guideURL))
	return nil
}

func (h *Handlers) verifyJournal(w http.ResponseWriter, r *http.Request) error {
	rep, err := h.svc.VerifyJournal(r.Context())
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, rep)
	return nil
}

// listGrants is GET /v1/grants?key_id=&workarea=&epoch=&cursor=&limit=.
func (h *Handlers) listGrants(w http.ResponseWriter, r *http.Request) error {
	q, err := transport.Query(r, "key_id", "workarea", "epoch", "cursor", "limit")
	if err != nil {
		return err
	}
	in := app.GrantQuery{KeyID: q["key_id"], Workarea: q["workarea"], Cursor: q["cursor"]}
	if in.Limit, err = transport.QueryInt(q, "limit"); err != nil {
		return err
	}
	if v := q["epoch"]; v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errs.Invalid("epoch: want a permission_epoch, got %q", v)
		}
		in.Epoch = &n
	}
	page, err := h.svc.ListGrants(r.Context(), in)
	if err != nil {
		return err
	}
	type grant struct {
		GrantID      string     `json:"grant_id"`
		KeyID        string     `json:"key_id"`
		Principal    string     `json:"principal"`
		Workarea     string     `json:"workarea"`
		WorkareaPath string     `json:"workarea_path"`
		Scope        string     `json:"scope"`
		Effect       string     `json:"effect"`
		CreatedAt    time.Time  `json:"created_at"`
		RemovedAt    *time.Time `json:"removed_at"`
		CreatedEpoch *int64     `json:"created_epoch"`
		RemovedEpoch *int64     `json:"removed_epoch"`
		KeyRevoked   bool       `json:"key_revoked"`
	}
	out := make([]grant, len(page.Grants))
	for i, g := range page.Grants {
		out[i] = grant{GrantID: g.ID, KeyID: g.KeyID, Principal: g.Principal, Workarea: g.WorkareaID, WorkareaPath: g.WorkareaPath,
			Scope: g.Scope.String(), Effect: string(g.Effect), CreatedAt: g.CreatedAt.UTC(), RemovedAt: utcPtr(g.RemovedAt),
			CreatedEpoch: g.CreatedEpoch, RemovedEpoch: g.RemovedEpoch, KeyRevoked: g.KeyRevoked}
	}
	var next *string
	if page.NextCursor != "" {
		next = &page.NextCursor
	}
	w.Header().Set("Cache-Control", "no-store")
	transport.WriteJSON(w, http.StatusOK, map[string]any{"grants": out, "permission_epoch": page.Epoch, "next_cursor": next})
	return nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// listWorkareas is GET /v1/workareas?cursor=&limit=: the tree the key
// reads, parents before children.
func (h *Handlers) listWorkareas(w http.ResponseWriter, r *http.Request) error {
	q, err := transport.Query(r, "cursor", "limit")
	if err != nil {
		return err
	}
	limit, err := transport.QueryInt(q, "limit")
	if err != nil {
		return err
	}
	page, err := h.svc.ListWorkareas(r.Context(), q["cursor"], limit)
	if err != nil {
		return err
	}
	type node struct {
		ID     string     `json:"id"`
		Path   string     `json:"path"`
		Parent *string    `json:"parent"`
		Status string     `json:"status"`
		Crew   *wire.Crew `json:"crew"`
	}
	out := make([]node, len(page.Workareas))
	for i, wa := range page.Workareas {
		out[i] = node{ID: wa.ID, Path: wa.Path, Status: string(wa.Status), Crew: wire.ToCrew(wa.Crew)}
		if wa.ParentID != "" {
			out[i].Parent = &wa.ParentID
		}
	}
	var next *string
	if page.NextCursor != "" {
		next = &page.NextCursor
	}
	w.Header().Set("Cache-Control", "no-store")
	transport.WriteJSON(w, http.StatusOK, map[string]any{"workareas": out, "next_cursor": next})
	return nil
}

type quotasBody struct {
	WritesPerMinute *int       `json:"writes_per_minute"`
	Keys            []keyQuota `json:"keys"`
}

type keyQuota struct {
	KeyID             string `json:"key_id"`
	RequestsPerMinute int    `json:"requests_per_minute"`
}

func toQuotasBody(q app.Quotas) quotasBody {
	out := quotasBody{Keys: []keyQuota{}}
	if q.WritesPerMinute > 0 {
		n := q.WritesPerMinute
		out.WritesPerMinute = &n
	}
	for k, n := range q.Keys {
		out.Keys = append(out.Keys, keyQuota{KeyID: k, RequestsPerMinute: n})
	}
	slices.SortFunc(out.Keys, func(a, b keyQuota) int { return strings.Compare(a.KeyID, b.KeyID) })
	return out
}

// getQuotas is GET /v1/quotas.
func (h *Handlers) getQuotas(w http.ResponseWriter, r *http.Request) error {
	q, err := h.svc.GetQuotas(r.Context())
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, toQuotasBody(q))
	return nil
}

// putQuotas is PUT /v1/quotas: {"writes_per_minute"} for the tenant or
// {"key_id", "requests_per_minute"} for a key; 0 clears.
func (h *Handlers) putQuotas(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		WritesPerMinute   *int   `json:"writes_per_minute"`
		KeyID             string `json:"key_id"`
		RequestsPerMinute *int   `json:"requests_per_minute"`
	}
	if err := transport.Decode(r, &req); err != nil {
		return err
	}
	var q app.Quotas
	var err error
	switch {
	case req.WritesPerMinute != nil && req.KeyID == "" && req.RequestsPerMinute == nil:
		q, err = h.svc.SetQuota(r.Context(), "", *req.WritesPerMinute)
	case req.WritesPerMinute == nil && req.KeyID != "" && req.RequestsPerMinute != nil:
		q, err = h.svc.SetQuota(r.Context(), req.KeyID, *req.RequestsPerMinute)
	default:
		return errs.Invalid(`PUT /v1/quotas: send {"writes_per_minute"} for the tenant or {"key_id", "requests_per_minute"} for a key`)
	}
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusOK, toQuotasBody(q))
	return nil
}
