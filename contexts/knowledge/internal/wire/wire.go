// Package wire holds the knowledge context's request and answer shapes,
// shared by its MCP tools and its HTTP routes.
package wire

import (
	"time"

	"github.com/omlhub/oml/contexts/knowledge/internal/app"
	"github.com/omlhub/oml/contexts/knowledge/internal/domain"
)

// Page is a page version as read or written.
type Page struct {
	Store         string     `json:"store" jsonschema:"project: the workarea's knowledge base"`
	Workarea      string     `json:"workarea" jsonschema:"the workarea's id"`
	WorkareaPath  string     `json:"workarea_path,omitempty"`
	Path          string     `json:"path"`
	Content       string     `json:"content" jsonschema:"the page's text (empty for a deletion)"`
	Version       string     `json:"version" jsonschema:"sha256:<hex> of the content: pass it back as if_version"`
	State         string     `json:"state" jsonschema:"promoted (what every reader sees) or held (your version, waiting for review)"`
	Deleted       bool       `json:"deleted,omitempty" jsonschema:"true for a deletion's tombstone"`
	ArtifactID    string     `json:"artifact_id" jsonschema:"the version's claim in review (oml_my_work lists it)"`
	Revision      int        `json:"revision,omitempty" jsonschema:"a promoted version's place among the page's promoted versions (1, 2, …); none while held"`
	SizeBytes     int64      `json:"size_bytes"`
	Author        string     `json:"author" jsonschema:"the principal that wrote the version"`
	SubmittedAt   time.Time  `json:"submitted_at"`
	PromotedAt    *time.Time `json:"promoted_at,omitempty"`
	BaseVersion   string     `json:"base_version,omitempty" jsonschema:"the if_version it was written against"`
	StaleAfter    *time.Time `json:"stale_after,omitempty"`
	SourceSession string     `json:"source_session,omitempty" jsonschema:"the session brain_promote copied it from"`
	OwnHeld       []Held     `json:"own_held,omitempty" jsonschema:"your versions of this page waiting for review, newest first"`
}

// Held is one of the caller's versions waiting for review.
type Held struct {
	Version       string    `json:"version"`
	ArtifactID    string    `json:"artifact_id"`
	SubmittedAt   time.Time `json:"submitted_at"`
	HeldExpiresAt time.Time `json:"held_expires_at"`
	Deleted       bool      `json:"deleted,omitempty"`
}

// ToPage converts a version.
func ToPage(v domain.Version, workareaPath string) Page {
	p := Page{Store: "project", Workarea: v.WorkareaID, WorkareaPath: workareaPath, Path: v.Path, Content: v.Content, Version: v.Version,
		State: v.State, Deleted: v.Deleted(), ArtifactID: v.ArtifactID, Revision: v.Number, SizeBytes: v.Bytes(),
		Author: v.AuthorPrincipal, SubmittedAt: v.SubmittedAt.UTC(), PromotedAt: utc(v.PromotedAt), BaseVersion: v.BaseVersion,
		StaleAfter: utc(v.StaleAfter), SourceSession: v.SourceSession}
	return p
}

// ToPageRead converts a read: the version and the caller's held ones.
func ToPageRead(p app.Page) Page {
	out := ToPage(p.Version, p.WorkareaPath)
	for _, h := range p.OwnHeld {
		if h.ArtifactID == p.ArtifactID {
			continue
		}
		out.OwnHeld = append(out.OwnHeld, Held{Version: h.Version, ArtifactID: h.ArtifactID,
			SubmittedAt: h.SubmittedAt.UTC(), HeldExpiresAt: h.HeldExpiresAt.UTC(), Deleted: h.Deleted()})
	}
	return out
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// HistoryIn is the input of brain_history.
type HistoryIn struct {
	Store    string `json:"store,omitempty" jsonschema:"project (the only store with history)"`
	Workarea string `json:"workarea" jsonschema:"the workarea (id or path) whose knowledge base holds the page"`
	Path     string `json:"path" jsonschema:"/fs/…"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Limit    int    `json:"limit,omitempty" jsonschema:"versions at most, 1–500 (default 100)"`
}

// VersionItem is one promoted version in a page's history.
type VersionItem struct {
	Version    string     `json:"version"`
	Revision   int        `json:"revision"`
	ArtifactID string     `json:"artifact_id"`
	Author     string     `json:"author"`
	SizeBytes  int64      `json:"size_bytes"`
	Deleted    bool       `json:"deleted"`
	PromotedAt *time.Time `json:"promoted_at"`
}

// HistoryOut is the answer of brain_history.
type HistoryOut struct {
	Store      string        `json:"store"`
	Workarea   string        `json:"workarea"`
	Path       string        `json:"path"`
	Versions   []VersionItem `json:"versions"`
	NextCursor *string       `json:"next_cursor"`
}

// ToHistory converts a page of history.
func ToHistory(workarea, path string, vs []domain.Version, next string) HistoryOut {
	out := HistoryOut{Store: "project", Workarea: workarea, Path: path, Versions: make([]VersionItem, len(vs))}
	for i, v := range vs {
		out.Versions[i] = VersionItem{Version: v.Version, Revision: v.Number, ArtifactID: v.ArtifactID, Author: v.AuthorPrincipal,
			SizeBytes: v.Bytes(), Deleted: v.Deleted(), PromotedAt: utc(v.PromotedAt)}
	}
	if next != "" {
		out.NextCursor = &next
	}
	return out
}

// RevertIn is the input of brain_revert (and POST /v1/kb/revert).
type RevertIn struct {
	Store     string `json:"store,omitempty" jsonschema:"project (the only store with history)"`
	Workarea  string `json:"workarea" jsonschema:"the workarea (id or path) whose knowledge base holds the page"`
	Path      string `json:"path" jsonschema:"/fs/…"`
	Version   string `json:"version" jsonschema:"the promoted version to write back (brain_history lists them)"`
	IfVersion string `json:"if_version,omitempty" jsonschema:"apply only while the promoted head is still this version, now and at promotion"`
}

// ListItem is one live page in a listing.
type ListItem struct {
	Path       string     `json:"path"`
	Version    string     `json:"version"`
	SizeBytes  int64      `json:"size_bytes"`
	PromotedAt *time.Time `json:"promoted_at"`
}

// ListOut is a page of a knowledge base's listing.
type ListOut struct {
	Store      string     `json:"store"`
	Workarea   string     `json:"workarea"`
	Pages      []ListItem `json:"pages"`
	NextCursor *string    `json:"next_cursor"`
}

// ToList converts a listing.
func ToList(workarea string, vs []domain.Version, next string) ListOut {
	out := ListOut{Store: "project", Workarea: workarea, Pages: make([]ListItem, len(vs))}
	for i, v := range vs {
		out.Pages[i] = ListItem{Path: v.Path, Version: v.Version, SizeBytes: v.Bytes(), PromotedAt: utc(v.PromotedAt)}
	}
	if next != "" {
		out.NextCursor = &next
	}
	return out
}
