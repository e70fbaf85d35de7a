package wire

import (
	"time"

	"github.com/omlhub/oml/contexts/sessions/internal/app"
	"github.com/omlhub/oml/contexts/sessions/internal/domain"
)

// BrainGetIn is the input of brain_get.
type BrainGetIn struct {
	Store    string `json:"store,omitempty" jsonschema:"session (the default): your session's brain; the knowledge base (project) is not available yet"`
	Path     string `json:"path" jsonschema:"/fs/… (a file) or /kv/… (a key-value entry)"`
	Session  string `json:"session,omitempty" jsonschema:"a session id of your own (default: this key's active session)"`
	Workarea string `json:"workarea,omitempty" jsonschema:"whose active session to use, when this key has active sessions in several workareas"`
	Version  string `json:"version,omitempty" jsonschema:"a version a read returned: a session brain keeps only the current one"`
}

// Ref is the brain the input names.
func (in BrainGetIn) Ref() app.BrainRef {
	return app.BrainRef{Store: in.Store, Session: in.Session, Workarea: in.Workarea}
}

// BrainEntry is one brain entry with its content (brain_get).
type BrainEntry struct {
	Store     string    `json:"store"`
	SessionID string    `json:"session_id"`
	Path      string    `json:"path"`
	Type      string    `json:"type" jsonschema:"file (/fs/) or kv (/kv/)"`
	Content   string    `json:"content"`
	Version   string    `json:"version" jsonschema:"sha256:<hex> of the content: pass it back as if_version for a conditional write"`
	SizeBytes int64     `json:"size_bytes"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ToBrainEntry converts an entry read from a session's brain.
func ToBrainEntry(s domain.Session, e domain.BrainEntry) BrainEntry {
	return BrainEntry{Store: domain.StoreSession, SessionID: s.ID, Path: e.Path, Type: domain.Kind(e.Path), Content: string(e.Content),
		Version: e.Version, SizeBytes: e.Size, UpdatedAt: e.UpdatedAt.UTC()}
}

// BrainPutIn is the input of brain_put.
type BrainPutIn struct {
	Store     string `json:"store" jsonschema:"required: session (your session's brain); the knowledge base (project) is not available yet"`
	Path      string `json:"path" jsonschema:"/fs/… (a file) or /kv/… (a key-value entry)"`
	Content   string `json:"content" jsonschema:"the value, at most 4 MiB of UTF-8"`
	Session   string `json:"session,omitempty" jsonschema:"a running session id of your own (default: this key's active session)"`
	Workarea  string `json:"workarea,omitempty" jsonschema:"whose active session to use, when this key has active sessions in several workareas"`
	IfVersion string `json:"if_version,omitempty" jsonschema:"write only while the stored value still has this version (sha256:…), or absent: only where nothing is stored"`
}

// BrainPutOut is the output of brain_put.
type BrainPutOut struct {
	Store     string `json:"store"`
	SessionID string `json:"session_id"`
	Path      string `json:"path"`
	Version   string `json:"version"`
	SizeBytes int64  `json:"size_bytes"`
	Created   bool   `json:"created" jsonschema:"true when nothing was stored at the path before"`
}

// BrainListIn is the input of brain_list.
type BrainListIn struct {
	Store    string `json:"store,omitempty" jsonschema:"session (the default); the knowledge base (project) is not available yet"`
	Session  string `json:"session,omitempty" jsonschema:"a session id of your own (default: this key's active session)"`
	Workarea string `json:"workarea,omitempty" jsonschema:"whose active session to use, when this key has active sessions in several workareas"`
	Prefix   string `json:"prefix,omitempty" jsonschema:"only entries whose path starts with this (/fs/, /kv/ or deeper)"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Limit    int    `json:"limit,omitempty" jsonschema:"entries at most, 1–500 (default 100)"`
}

// BrainItem is a listed entry (no content).
type BrainItem struct {
	Path      string    `json:"path"`
	Type      string    `json:"type" jsonschema:"file (/fs/) or kv (/kv/)"`
	SizeBytes int64     `json:"size_bytes"`
	Version   string    `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
}

// BrainListOut is the output of brain_list.
type BrainListOut struct {
	Store      string      `json:"store"`
	SessionID  string      `json:"session_id"`
	Entries    []BrainItem `json:"entries"`
	NextCursor *string     `json:"next_cursor"`
}

// ToBrainList converts a page of a brain's listing.
func ToBrainList(p app.BrainPage) BrainListOut {
	out := BrainListOut{Store: domain.StoreSession, SessionID: p.Session.ID, Entries: make([]BrainItem, len(p.Entries))}
	for i, e := range p.Entries {
		out.Entries[i] = BrainItem{Path: e.Path, Type: domain.Kind(e.Path), SizeBytes: e.Size, Version: e.Version, UpdatedAt: e.UpdatedAt.UTC()}
	}
	if p.NextCursor != "" {
		out.NextCursor = &p.NextCursor
	}
	return out
}

// BrainDeleteOut is the answer of DELETE /v1/sessions/{id}/brain.
type BrainDeleteOut struct {
	Store     string `json:"store"`
	SessionID string `json:"session_id"`
	Path      string `json:"path"`
	Deleted   bool   `json:"deleted"`
}
