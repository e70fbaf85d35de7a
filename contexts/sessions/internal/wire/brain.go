package wire

import (
	"time"

	"github.com/omlhub/oml/contexts/sessions/internal/app"
	"github.com/omlhub/oml/contexts/sessions/internal/domain"
)

// BrainGetIn is the input of brain_get.
type BrainGetIn struct {
	Store    string `json:"store,omitempty" jsonschema:"session (the default): your session's brain; project: the workarea's knowledge base (reviewed pages)"`
	Path     string `json:"path" jsonschema:"/fs/… (a file) or /kv/… (a key-value entry); a knowledge base holds /fs/ pages only"`
	Session  string `json:"session,omitempty" jsonschema:"a session id of your own (default: this key's active session); store session only"`
	Workarea string `json:"workarea,omitempty" jsonschema:"session store: whose active session to use when this key has several; project store: the knowledge base's workarea (default: your active session's)"`
	Version  string `json:"version,omitempty" jsonschema:"a version a read returned: a session brain keeps only the current one; a page's promoted versions are listed by brain_history"`
}

// Ref is the brain the input names.
func (in BrainGetIn) Ref() app.BrainRef {
	return app.BrainRef{Store: in.Store, Session: in.Session, Workarea: in.Workarea}
}

// BrainEntry is one brain entry with its content (brain_get), or a
// knowledge-base page version (store project, with the page's fields).
type BrainEntry struct {
	Store     string    `json:"store"`
	SessionID string    `json:"session_id,omitempty" jsonschema:"the session whose brain holds the entry (store session)"`
	Path      string    `json:"path"`
	Type      string    `json:"type" jsonschema:"file (/fs/) or kv (/kv/)"`
	Content   string    `json:"content"`
	Version   string    `json:"version" jsonschema:"sha256:<hex> of the content: pass it back as if_version for a conditional write"`
	SizeBytes int64     `json:"size_bytes"`
	UpdatedAt time.Time `json:"updated_at"`
	PageFields
}

// PageFields are what a knowledge-base page version shows beside an
// entry's (store project).
type PageFields struct {
	Workarea      string     `json:"workarea,omitempty" jsonschema:"the knowledge base's workarea id (store project)"`
	WorkareaPath  string     `json:"workarea_path,omitempty"`
	State         string     `json:"state,omitempty" jsonschema:"promoted (what every reader sees) or held (your own version, waiting for review)"`
	Deleted       bool       `json:"deleted,omitempty" jsonschema:"true for a deletion's tombstone"`
	ArtifactID    string     `json:"artifact_id,omitempty" jsonschema:"the version's claim in review (oml_my_work lists it)"`
	Revision      int        `json:"revision,omitempty" jsonschema:"a promoted version's place among the page's promoted versions (1, 2, …); none while held"`
	Author        string     `json:"author,omitempty" jsonschema:"the principal that wrote the version"`
	PromotedAt    *time.Time `json:"promoted_at,omitempty"`
	BaseVersion   string     `json:"base_version,omitempty" jsonschema:"the if_version it was written against"`
	StaleAfter    *time.Time `json:"stale_after,omitempty"`
	SourceSession string     `json:"source_session,omitempty" jsonschema:"the session brain_promote copied it from"`
	OwnHeld       []HeldPage `json:"own_held,omitempty" jsonschema:"your versions of this page waiting for review, newest first"`
}

// HeldPage is one of the caller's page versions waiting for review.
type HeldPage struct {
	Version       string    `json:"version"`
	ArtifactID    string    `json:"artifact_id"`
	SubmittedAt   time.Time `json:"submitted_at"`
	HeldExpiresAt time.Time `json:"held_expires_at"`
	Deleted       bool      `json:"deleted,omitempty"`
}

// FromPage converts a knowledge-base page version.
func FromPage(p app.KBPage) BrainEntry {
	out := BrainEntry{Store: domain.StoreProject, Path: p.Path, Type: "file", Content: p.Content, Version: p.Version,
		SizeBytes: max(p.Size, int64(len(p.Content))), UpdatedAt: p.SubmittedAt.UTC(), PageFields: PageFields{
			Workarea: p.Workarea, WorkareaPath: p.WorkareaPath, State: p.State, Deleted: p.Deleted, ArtifactID: p.ArtifactID,
			Revision: p.Revision, Author: p.Author, PromotedAt: p.PromotedAt, BaseVersion: p.BaseVersion, StaleAfter: p.StaleAfter,
			SourceSession: p.SourceSession,
		}}
	if p.PromotedAt != nil {
		out.UpdatedAt = p.PromotedAt.UTC()
	}
	for _, h := range p.OwnHeld {
		out.OwnHeld = append(out.OwnHeld, HeldPage{Version: h.Version, ArtifactID: h.ArtifactID,
			SubmittedAt: h.SubmittedAt.UTC(), HeldExpiresAt: h.HeldExpiresAt.UTC(), Deleted: h.Deleted})
	}
	return out
}

// ToBrainEntry converts an entry read from a session's brain.
func ToBrainEntry(s domain.Session, e domain.BrainEntry) BrainEntry {
	return BrainEntry{Store: domain.StoreSession, SessionID: s.ID, Path: e.Path, Type: domain.Kind(e.Path), Content: string(e.Content),
		Version: e.Version, SizeBytes: e.Size, UpdatedAt: e.UpdatedAt.UTC()}
}

// BrainPutIn is the input of brain_put.
type BrainPutIn struct {
	Store      string     `json:"store" jsonschema:"required: session (your session's brain) or project (the workarea's knowledge base: a page version, held for review)"`
	Path       string     `json:"path" jsonschema:"/fs/… (a file) or /kv/… (a key-value entry); a knowledge base holds /fs/ pages only"`
	Content    *string    `json:"content,omitempty" jsonschema:"the value, at most 4 MiB of UTF-8 (a page: at most 1 MiB); required unless from"`
	Session    string     `json:"session,omitempty" jsonschema:"a running session id of your own (default: this key's active session); store session only"`
	Workarea   string     `json:"workarea,omitempty" jsonschema:"session store: whose active session to use when this key has several; project store: the knowledge base's workarea (default: your active session's)"`
	IfVersion  string     `json:"if_version,omitempty" jsonschema:"write only while the stored value (a page: its promoted head, now and at promotion) still has this version (sha256:…), or absent: only where nothing is"`
	StaleAfter *time.Time `json:"stale_after,omitempty" jsonschema:"a page only: when it should be looked at again (RFC 3339)"`
	From       string     `json:"from,omitempty" jsonschema:"store project only, instead of content: copy this entry (/fs/… or /kv/…) of your own session brain (session, default the active one) into the page, which then cites the session"`
}

// BrainPutOut is the output of brain_put.
type BrainPutOut struct {
	Store     string `json:"store"`
	SessionID string `json:"session_id,omitempty"`
	Path      string `json:"path"`
	Version   string `json:"version"`
	SizeBytes int64  `json:"size_bytes"`
	Created   bool   `json:"created" jsonschema:"true when nothing was stored at the path before (store session)"`
	PageFields
}

// PutFromPage is brain_put's answer for a page version.
func PutFromPage(p app.KBPage) BrainPutOut {
	e := FromPage(p)
	return BrainPutOut{Store: e.Store, Path: e.Path, Version: e.Version, SizeBytes: e.SizeBytes, PageFields: e.PageFields}
}

// BrainListIn is the input of brain_list.
type BrainListIn struct {
	Store    string `json:"store,omitempty" jsonschema:"session (the default); project: the workarea's knowledge base (its promoted pages)"`
	Session  string `json:"session,omitempty" jsonschema:"a session id of your own (default: this key's active session); store session only"`
	Workarea string `json:"workarea,omitempty" jsonschema:"session store: whose active session to use when this key has several; project store: the knowledge base's workarea (default: your active session's)"`
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
	SessionID  string      `json:"session_id,omitempty"`
	Workarea   string      `json:"workarea,omitempty" jsonschema:"the knowledge base's workarea id (store project)"`
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

// ListFromPages converts a page of a knowledge base's listing.
func ListFromPages(l app.PageList) BrainListOut {
	out := BrainListOut{Store: domain.StoreProject, Workarea: l.Workarea, Entries: make([]BrainItem, len(l.Pages))}
	for i, p := range l.Pages {
		at := p.SubmittedAt
		if p.PromotedAt != nil {
			at = *p.PromotedAt
		}
		out.Entries[i] = BrainItem{Path: p.Path, Type: "file", SizeBytes: max(p.Size, int64(len(p.Content))), Version: p.Version, UpdatedAt: at.UTC()}
	}
	if l.Next != "" {
		out.NextCursor = &l.Next
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
