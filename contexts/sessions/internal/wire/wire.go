// Package wire holds the sessions context's JSON shapes (seed 002's
// session tools, on OML's names), shared by its HTTP routes and MCP tools.
package wire

import (
	"context"
	"encoding/json"
	"time"

	"github.com/omlhub/oml/contexts/sessions/internal/app"
	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/idempotency"
)

// StartIn is the input of session_start.
type StartIn struct {
	Workarea       string `json:"workarea" jsonschema:"the workarea (id or path) the session works in; needs writer there"`
	Name           string `json:"name" jsonschema:"the session's name, unique per owner in the workarea (1–128 characters); the same name resumes the same session"`
	From           string `json:"from,omitempty" jsonschema:"a session id to pick up: an ended one is adopted (ownership moves to you), a running one forked into a new session named name"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"a retry with the same key returns the first answer"`
}

// Session is a session as the tools show it.
type Session struct {
	SessionID   string     `json:"session_id"`
	Workarea    string     `json:"workarea"`
	Name        string     `json:"name"`
	Owner       string     `json:"owner" jsonschema:"the owning principal"`
	OwnerKeyID  string     `json:"owner_key_id" jsonschema:"the key that last took the session"`
	Status      string     `json:"status" jsonschema:"running or ended"`
	HandoffNote string     `json:"handoff_note"`
	AdoptedFrom *string    `json:"adopted_from" jsonschema:"the principal an adoption took the session from"`
	ForkedFrom  *string    `json:"forked_from" jsonschema:"the session a fork copied"`
	StartedAt   time.Time  `json:"started_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	EndedAt     *time.Time `json:"ended_at"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ToSession converts a session.
func ToSession(s domain.Session) Session {
	return Session{
		SessionID: s.ID, Workarea: s.WorkareaID, Name: s.Name, Owner: s.Owner.Principal, OwnerKeyID: s.Owner.KeyID,
		Status: string(s.Status), HandoffNote: s.HandoffNote, AdoptedFrom: optional(s.AdoptedFrom),
		ForkedFrom: optional(s.ForkedFrom), StartedAt: s.StartedAt, UpdatedAt: s.UpdatedAt, EndedAt: s.EndedAt,
	}
}

// StartOut is the output of session_start.
type StartOut struct {
	SessionID        string   `json:"session_id"`
	Workarea         string   `json:"workarea"`
	Name             string   `json:"name"`
	Owner            string   `json:"owner"`
	Status           string   `json:"status"`
	Mode             string   `json:"mode" jsonschema:"started, resumed, adopted or forked"`
	Namespaces       []string `json:"namespaces" jsonschema:"the brain's namespaces: /fs/ for files, /kv/ for key-value entries"`
	RecoveryPath     string   `json:"recovery_path" jsonschema:"the conventional recovery document in the session's brain"`
	HandoffNote      *string  `json:"handoff_note" jsonschema:"the note the previous owner left (on a pickup, the source's); null when none"`
	AdoptedFrom      *string  `json:"adopted_from"`
	ForkedFrom       *string  `json:"forked_from"`
	IdempotentReplay bool     `json:"idempotent_replay"`
}

// ToStartOut converts a start.
func ToStartOut(r app.Started) StartOut {
	s := r.Session
	return StartOut{
		SessionID: s.ID, Workarea: s.WorkareaID, Name: s.Name, Owner: s.Owner.Principal, Status: string(s.Status),
		Mode: string(r.Mode), Namespaces: []string{domain.NamespaceFS, domain.NamespaceKV}, RecoveryPath: domain.RecoveryPath,
		HandoffNote: optional(r.HandoffNote), AdoptedFrom: optional(s.AdoptedFrom), ForkedFrom: optional(s.ForkedFrom),
	}
}

// Start runs session_start under the caller's idempotency key, scoped to
// (key, resolved workarea, session.start), and returns the stored answer
// on a replay.
func Start(ctx context.Context, svc *app.Service, idem idempotency.Doer, in StartIn) (StartOut, error) {
	key := in.IdempotencyKey
	in.IdempotencyKey = ""
	cmd := app.Start{Workarea: in.Workarea, Name: in.Name, From: in.From}
	if key == "" {
		r, err := svc.Start(ctx, cmd)
		if err != nil {
			return StartOut{}, err
		}
		return ToStartOut(r), nil
	}
	wid, err := svc.WorkareaID(ctx, in.Workarea)
	if err != nil {
		return StartOut{}, err
	}
	c, _ := auth.From(ctx)
	scope := idempotency.Scope{TenantID: c.TenantID, KeyID: c.KeyID, Workarea: wid, Operation: "session.start", Key: key}
	res, err := idem.Do(ctx, scope, in, func(ctx context.Context) (any, error) {
		r, err := svc.Start(ctx, cmd)
		if err != nil {
			return nil, err
		}
		return ToStartOut(r), nil
	})
	if err != nil {
		return StartOut{}, err
	}
	var out StartOut
	return out, json.Unmarshal(res.Response(), &out)
}

// EndIn is the input of session_end.
type EndIn struct {
	SessionID   string `json:"session_id,omitempty" jsonschema:"the session to end (default: this key's active session)"`
	Workarea    string `json:"workarea,omitempty" jsonschema:"without session_id: this key's active session in this workarea (id or path)"`
	HandoffNote string `json:"handoff_note,omitempty" jsonschema:"a note for whoever picks the session up (at most 16 KiB)"`
}

// ListIn is the input of session_list and GET /v1/sessions.
type ListIn struct {
	Workarea string `json:"workarea,omitempty" jsonschema:"only sessions in this workarea's subtree (id or path)"`
	Status   string `json:"status,omitempty" jsonschema:"running or ended"`
	Limit    int    `json:"limit,omitempty" jsonschema:"page size, 1–200 (default 50)"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

// Query converts the input.
func (in ListIn) Query() app.List {
	return app.List{Workarea: in.Workarea, Status: in.Status, Limit: in.Limit, Cursor: in.Cursor}
}

// ListOut is the output of session_list.
type ListOut struct {
	Sessions   []Session `json:"sessions"`
	NextCursor *string   `json:"next_cursor"`
}

// ToListOut converts a page.
func ToListOut(p app.Page) ListOut {
	out := ListOut{Sessions: make([]Session, len(p.Sessions)), NextCursor: optional(p.NextCursor)}
	for i, s := range p.Sessions {
		out.Sessions[i] = ToSession(s)
	}
	return out
}

// ReassignIn is the body of POST /v1/sessions/{id}/reassign.
type ReassignIn struct {
	ToKeyID string `json:"to_key_id"`
}
