// Package wire holds the documents context's request and answer shapes,
// shared by its MCP tools (seed 002's artifact_* and comment_*) and its
// HTTP routes.
package wire

import (
	"time"

	"github.com/omlhub/oml/contexts/documents/internal/app"
	"github.com/omlhub/oml/contexts/documents/internal/domain"
)

// PublishIn is the input of artifact_publish (and POST /v1/documents).
type PublishIn struct {
	Workarea    string `json:"workarea" jsonschema:"the workarea (id or path) the document belongs to; writer access needed"`
	Format      string `json:"format" jsonschema:"html or markdown"`
	Content     string `json:"content" jsonschema:"the document, at most 1 MiB"`
	Title       string `json:"title,omitempty" jsonschema:"at most 200 characters; a markdown document's first heading when blank"`
	Description string `json:"description,omitempty" jsonschema:"at most 2000 characters"`
	Label       string `json:"label,omitempty" jsonschema:"a version label, at most 60 bytes"`
	Visibility  string `json:"visibility,omitempty" jsonschema:"who may open the viewer URL once a version is promoted: workarea (signed-in readers, the default), public or password"`
	Password    string `json:"password,omitempty" jsonschema:"visibility password: 8 to 200 characters"`
	SessionID   string `json:"session_id,omitempty" jsonschema:"the session the document belongs to (artifact_list filters by it)"`
	Actor       string `json:"actor,omitempty" jsonschema:"ignored: the actor is always the caller (seed 002)"`
}

// Publish converts the input.
func (in PublishIn) Publish() app.Publish {
	return app.Publish{Workarea: in.Workarea, Format: in.Format, Content: in.Content, Visibility: in.Visibility, Password: in.Password,
		SessionID: in.SessionID, Meta: domain.Meta{Title: in.Title, Description: in.Description, Label: in.Label}}
}

// Meta is a version's title, description and label.
func Meta(title, description, label string) domain.Meta {
	return domain.Meta{Title: title, Description: description, Label: label}
}

// UpdateIn is the input of artifact_update.
type UpdateIn struct {
	ArtifactID  string `json:"artifact_id" jsonschema:"the document (doc_…)"`
	Content     string `json:"content" jsonschema:"the new version, at most 1 MiB"`
	BaseVersion string `json:"base_version,omitempty" jsonschema:"the version (sha256:…) this edit is based on: refused with knowledge.conflict naming the current one if another was promoted since, now or at promotion"`
	Force       bool   `json:"force,omitempty" jsonschema:"skip the base_version check"`
	Title       string `json:"title,omitempty" jsonschema:"blank keeps the current title"`
	Description string `json:"description,omitempty" jsonschema:"blank keeps the current description"`
	Label       string `json:"label,omitempty" jsonschema:"blank keeps the current label"`
}

// DraftIn is the input of artifact_draft.
type DraftIn struct {
	ArtifactID string `json:"artifact_id,omitempty" jsonschema:"the document to draft a version of; omit to start a new one (workarea and format then)"`
	Workarea   string `json:"workarea,omitempty" jsonschema:"a new document's workarea"`
	Format     string `json:"format,omitempty" jsonschema:"a new document's format: html or markdown"`
	Content    string `json:"content" jsonschema:"the draft, at most 1 MiB; replaces your previous draft"`
}

// GetIn is the input of artifact_get.
type GetIn struct {
	ArtifactID string `json:"artifact_id" jsonschema:"the document (doc_…)"`
	Version    string `json:"version,omitempty" jsonschema:"an earlier promoted version (artifact_versions lists them)"`
}

// ListIn is the input of artifact_list.
type ListIn struct {
	Workarea  string `json:"workarea" jsonschema:"the workarea (id or path)"`
	SessionID string `json:"session_id,omitempty" jsonschema:"only documents published from this session"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Limit     int    `json:"limit,omitempty" jsonschema:"documents at most, 1–200 (default 50)"`
}

// Document is a document as returned everywhere: its version (the
// promoted head, or your own held one), counts and URLs.
type Document struct {
	ArtifactID    string     `json:"artifact_id"`
	Workarea      string     `json:"workarea"`
	WorkareaPath  string     `json:"workarea_path"`
	Format        string     `json:"format"`
	Visibility    string     `json:"visibility"`
	Actor         string     `json:"actor" jsonschema:"the principal that created the document"`
	SessionID     string     `json:"session_id,omitempty"`
	Title         string     `json:"title"`
	Description   string     `json:"description,omitempty"`
	Label         string     `json:"label,omitempty"`
	Content       *string    `json:"content,omitempty" jsonschema:"artifact_get only"`
	Version       string     `json:"version,omitempty" jsonschema:"sha256:… of the content: the base_version of an update"`
	Revision      int        `json:"revision,omitempty"`
	State         string     `json:"state,omitempty" jsonschema:"promoted (what every reader sees) or held (your version, waiting for review); empty for a draft-only document"`
	ReviewID      string     `json:"review_id,omitempty" jsonschema:"the version's claim in review (art_…; oml_my_work lists it)"`
	Author        string     `json:"author,omitempty" jsonschema:"the principal that wrote this version"`
	PromotedAt    *time.Time `json:"promoted_at,omitempty"`
	ViewerURL     string     `json:"viewer_url,omitempty" jsonschema:"where a browser opens the promoted version (public, password or signed-in readers, by visibility)"`
	DraftURL      string     `json:"draft_url,omitempty" jsonschema:"your draft, for you alone (signed in to the pages)"`
	CommentsCount int        `json:"comments_count"`
	CommentsOpen  int        `json:"comments_open"`
	OwnHeld       []Held     `json:"own_held,omitempty" jsonschema:"your versions waiting for review"`
}

// Held is one of the caller's versions waiting for review.
type Held struct {
	Version  string `json:"version"`
	ReviewID string `json:"review_id"`
}

// ToDocument converts a view; content is set for artifact_get.
func ToDocument(v app.View, withContent bool) Document {
	d := Document{ArtifactID: v.Document.ID, Workarea: v.Document.WorkareaID, WorkareaPath: v.WorkareaPath, Format: v.Document.Format,
		Visibility: v.Document.Visibility, Actor: v.Document.ActorPrincipal, SessionID: v.Document.SessionID, Title: v.Version.Title,
		Description: v.Version.Description, Label: v.Version.Label, Version: v.Version.Version, Revision: v.Version.Revision,
		State: v.Version.State, ReviewID: v.Version.ArtifactID, Author: v.Version.AuthorPrincipal, PromotedAt: utc(v.Version.PromotedAt),
		ViewerURL: v.ViewerURL, DraftURL: v.DraftURL, CommentsCount: v.Counts.Total, CommentsOpen: v.Counts.Open}
	if withContent && v.Version.ArtifactID != "" {
		c := v.Version.Content
		d.Content = &c
	}
	for _, h := range v.OwnHeld {
		if h.ArtifactID != v.Version.ArtifactID {
			d.OwnHeld = append(d.OwnHeld, Held{Version: h.Version, ReviewID: h.ArtifactID})
		}
	}
	return d
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ListOut is a page of artifact_list.
type ListOut struct {
	Artifacts  []Document `json:"artifacts"`
	NextCursor *string    `json:"next_cursor"`
}

// VersionsOut is the answer of artifact_versions.
type VersionsOut struct {
	ArtifactID string        `json:"artifact_id"`
	Versions   []VersionItem `json:"versions"`
}

// VersionItem is one promoted version.
type VersionItem struct {
	Version    string     `json:"version"`
	Revision   int        `json:"revision"`
	ReviewID   string     `json:"review_id"`
	Title      string     `json:"title"`
	Label      string     `json:"label,omitempty"`
	Author     string     `json:"author"`
	SizeBytes  int        `json:"size_bytes"`
	PromotedAt *time.Time `json:"promoted_at"`
}

// ToVersions converts a document's versions.
func ToVersions(id string, vs []domain.Version) VersionsOut {
	out := VersionsOut{ArtifactID: id, Versions: make([]VersionItem, len(vs))}
	for i, v := range vs {
		out.Versions[i] = VersionItem{Version: v.Version, Revision: v.Revision, ReviewID: v.ArtifactID, Title: v.Title, Label: v.Label,
			Author: v.AuthorPrincipal, SizeBytes: max(v.Size, len(v.Content)), PromotedAt: utc(v.PromotedAt)}
	}
	return out
}

// IDIn names a document.
type IDIn struct {
	ArtifactID string `json:"artifact_id" jsonschema:"the document (doc_…)"`
}

// CommentIn is the input of comment_post.
type CommentIn struct {
	ArtifactID string `json:"artifact_id" jsonschema:"the document (doc_…)"`
	Body       string `json:"body" jsonschema:"the comment, at most 4000 characters"`
	Revision   int    `json:"revision,omitempty" jsonschema:"the promoted version commented on (default the current one)"`
	Offset     *int   `json:"offset,omitempty" jsonschema:"anchor to a point: a byte offset into that version's content"`
	Quote      string `json:"quote,omitempty" jsonschema:"anchor to a quote the version contains (at most 1000 characters)"`
}

// Comment is a comment as returned.
type Comment struct {
	CommentID   string     `json:"comment_id"`
	ArtifactID  string     `json:"artifact_id"`
	Revision    int        `json:"revision"`
	Actor       string     `json:"actor" jsonschema:"the principal that posted it"`
	Body        string     `json:"body"`
	Offset      *int       `json:"offset,omitempty"`
	Quote       string     `json:"quote,omitempty"`
	Resolved    bool       `json:"resolved"`
	ResolvedAt  *time.Time `json:"resolved_at,omitempty"`
	ResolvedBy  string     `json:"resolved_by,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	DeleteToken string     `json:"delete_token,omitempty" jsonschema:"comment_post only, shown once: resolves or deletes the comment without writer access"`
}

// ToComment converts a comment.
func ToComment(c domain.Comment) Comment {
	return Comment{CommentID: c.ID, ArtifactID: c.DocumentID, Revision: c.Revision, Actor: c.AuthorPrincipal, Body: c.Body,
		Offset: c.AnchorOffset, Quote: c.AnchorQuote, Resolved: c.ResolvedAt != nil, ResolvedAt: utc(c.ResolvedAt),
		ResolvedBy: c.ResolvedBy, CreatedAt: c.CreatedAt.UTC()}
}

// CommentsOut is the answer of comment_list.
type CommentsOut struct {
	ArtifactID    string    `json:"artifact_id"`
	Comments      []Comment `json:"comments"`
	CommentsCount int       `json:"comments_count"`
	CommentsOpen  int       `json:"comments_open"`
}

// ResolveIn is the input of comment_resolve.
type ResolveIn struct {
	CommentID   string `json:"comment_id"`
	Resolved    *bool  `json:"resolved,omitempty" jsonschema:"true (the default) marks it done, false reopens it"`
	DeleteToken string `json:"delete_token,omitempty" jsonschema:"the comment's token, when this key does not write the document's workarea"`
}
