// Package wire holds the access context's JSON shapes, shared by its HTTP
// routes and MCP tools (they are the same contract, seed 000), and the
// named conversions from app types to them.
package wire

import (
	"time"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/domain"
)

// WorkareaRef is the input of oml_workarea_info.
type WorkareaRef struct {
	Workarea string `json:"workarea" jsonschema:"the workarea id (wa_…) or its path (universe.procurement)"`
}

// Crew is a workarea's crew record.
type Crew struct {
	Name            string `json:"name,omitempty"`
	CharterURI      string `json:"charter_uri,omitempty"`
	ExternalManager string `json:"external_manager,omitempty"`
}

// Child is one readable child.
type Child struct {
	ID       string `json:"id"`
	PathLeaf string `json:"path_leaf"`
	Status   string `json:"status"`
}

// Edge is a ratified or pending workarea edge.
type Edge struct {
	Label string `json:"label"`
	To    string `json:"to"`
	State string `json:"state"`
}

// WorkareaInfo is the output of oml_workarea_info and GET /v1/workareas/{id}.
type WorkareaInfo struct {
	ID               string   `json:"id"`
	Path             string   `json:"path"`
	Status           string   `json:"status"`
	Crew             *Crew    `json:"crew"`
	Parent           *string  `json:"parent"`
	Children         []Child  `json:"children"`
	Edges            []Edge   `json:"edges"`
	MyEffectiveVerbs []string `json:"my_effective_verbs"`
	PermissionEpoch  int64    `json:"permission_epoch"`
}

// ToWorkareaInfo converts the app's view.
func ToWorkareaInfo(in app.Info) WorkareaInfo {
	w := in.Workarea
	out := WorkareaInfo{
		ID: w.ID, Path: w.Path, Status: string(w.Status), Crew: ToCrew(w.Crew),
		Children: make([]Child, len(in.Children)), Edges: []Edge{},
		MyEffectiveVerbs: in.Verbs, PermissionEpoch: in.Epoch,
	}
	if w.ParentID != "" {
		out.Parent = &w.ParentID
	}
	for i, c := range in.Children {
		out.Children[i] = Child{ID: c.ID, PathLeaf: c.Name, Status: string(c.Status)}
	}
	for _, e := range in.Edges {
		out.Edges = append(out.Edges, Edge{Label: e.Label, To: e.To, State: e.State})
	}
	return out
}

// ToCrew converts a domain crew record.
func ToCrew(c *domain.Crew) *Crew {
	if c == nil {
		return nil
	}
	return &Crew{Name: c.Name, CharterURI: c.CharterURI, ExternalManager: c.ExternalManager}
}

// FromCrew converts a wire crew record.
func FromCrew(c *Crew) *domain.Crew {
	if c == nil {
		return nil
	}
	return &domain.Crew{Name: c.Name, CharterURI: c.CharterURI, ExternalManager: c.ExternalManager}
}

// Whoami is the output of the whoami tool and GET /v1/whoami.
type Whoami struct {
	KeyID        string `json:"key_id"`
	Principal    string `json:"principal"`
	Role         string `json:"role"`
	TenantID     string `json:"tenant_id"`
	RootWorkarea string `json:"root_workarea" jsonschema:"the tenant's universe; start oml_workarea_info here"`
	GuideURL     string `json:"guide_url" jsonschema:"where the agent guide is served"`
}

// ToWhoami converts the app's answer.
func ToWhoami(w app.Whoami, guideURL string) Whoami {
	return Whoami{
		KeyID: w.Caller.KeyID, Principal: w.Caller.Principal, Role: w.Caller.Role,
		TenantID: w.Caller.TenantID, RootWorkarea: w.RootID, GuideURL: guideURL,
	}
}

// Key is a key as listed.
type Key struct {
	KeyID     string     `json:"key_id"`
	Principal string     `json:"principal"`
	Role      string     `json:"role"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// ToKey converts an app key.
func ToKey(k app.Key) Key {
	return Key{KeyID: k.ID, Principal: k.Principal.Name, Role: string(k.Role), CreatedAt: k.CreatedAt.UTC(), RevokedAt: utc(k.RevokedAt)}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
