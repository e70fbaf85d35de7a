// Package mcptools registers the documents context's MCP tools: seed
// 002's artifact_* and comment_* (a document is identified by
// artifact_id, doc_…). artifact_delete and comment_delete are not here:
// the MCP surface carries no delete verb (R1); a comment is deleted over
// HTTP (DELETE /v1/comments/{id}).
package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/documents/internal/app"
	"github.com/omlhub/oml/contexts/documents/internal/wire"
	"github.com/omlhub/oml/platform/transport"
)

// Register adds the tools to t.
func Register(t *transport.Tools, svc *app.Service) {
	transport.Add(t, transport.ToolSpec{
		Name:  "artifact_publish",
		Title: "Publish a document",
		Description: "Publish an HTML or markdown document in a workarea (writer access): its first version is held until " +
			"an identity that did not write it approves it; then readers of the workarea read it (artifact_get) and a " +
			"browser opens it at viewer_url — signed-in readers, anyone (public) or anyone with the password, by " +
			"visibility; HTML is served sandboxed. You are recorded as its actor.",
	}, func(ctx context.Context, in wire.PublishIn) (wire.Document, error) {
		v, err := svc.Publish(ctx, in.Publish())
		return wire.ToDocument(v, false), err
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "artifact_update",
		Title: "Publish a new version of a document",
		Description: "Submit a new version of a document (writer access), held until approved like the first. Pass the " +
			"version you edited as base_version: if another was promoted since, the update is refused (knowledge.conflict " +
			"naming the current version) now or at promotion, unless force.",
	}, func(ctx context.Context, in wire.UpdateIn) (wire.Document, error) {
		v, err := svc.Update(ctx, app.Update{ID: in.ArtifactID, Content: in.Content, BaseVersion: in.BaseVersion, Force: in.Force,
			Meta: wire.Meta(in.Title, in.Description, in.Label)})
		return wire.ToDocument(v, false), err
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "artifact_draft",
		Title: "Keep a draft of a document",
		Description: "Keep your live working version of a document (or start a new one from workarea and format): nobody " +
			"else sees it and it is never reviewed; open draft_url in your own browser, signed in to the pages as this " +
			"key (the URL carries no credential). Publish it with artifact_publish or artifact_update.",
		Idempotent: true,
	}, func(ctx context.Context, in wire.DraftIn) (wire.Document, error) {
		v, err := svc.Draft(ctx, in.ArtifactID, app.Publish{Workarea: in.Workarea, Format: in.Format, Content: in.Content})
		return wire.ToDocument(v, false), err
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "artifact_get",
		Title: "Read a document",
		Description: "Read a document's content and metadata: its promoted version (or an earlier one by version), your own " +
			"versions waiting for review beside it, comments_count and comments_open across all versions.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.GetIn) (wire.Document, error) {
		v, err := svc.Get(ctx, in.ArtifactID, in.Version)
		return wire.ToDocument(v, true), err
	})
	transport.Add(t, transport.ToolSpec{
		Name:        "artifact_versions",
		Title:       "List a document's versions",
		Description: "List a document's promoted versions, newest first (version, revision, title, label, author).",
		ReadOnly:    true, Idempotent: true,
	}, func(ctx context.Context, in wire.IDIn) (wire.VersionsOut, error) {
		vs, err := svc.Versions(ctx, in.ArtifactID)
		return wire.ToVersions(in.ArtifactID, vs), err
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "artifact_list",
		Title: "List documents",
		Description: "List a workarea's documents you may read (promoted, or your own), optionally one session's, each with " +
			"comments_count and comments_open; cursor-paginated.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.ListIn) (wire.ListOut, error) {
		vs, next, err := svc.List(ctx, in.Workarea, in.SessionID, in.Cursor, in.Limit)
		out := wire.ListOut{Artifacts: make([]wire.Document, len(vs))}
		for i, v := range vs {
			out.Artifacts[i] = wire.ToDocument(v, false)
		}
		if next != "" {
			out.NextCursor = &next
		}
		return out, err
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "comment_post",
		Title: "Comment on a document",
		Description: "Comment on a document's promoted version (writer access), optionally anchored to a point (offset) or " +
			"a quote it contains. You are the comment's actor. Returns a delete_token, shown once.",
	}, func(ctx context.Context, in wire.CommentIn) (wire.Comment, error) {
		p, err := svc.PostComment(ctx, in.ArtifactID, in.Body, app.Anchor{Revision: in.Revision, Offset: in.Offset, Quote: in.Quote})
		out := wire.ToComment(p.Comment)
		out.DeleteToken = p.DeleteToken
		return out, err
	})
	transport.Add(t, transport.ToolSpec{
		Name:        "comment_list",
		Title:       "List a document's comments",
		Description: "List a document's comments, oldest first, with comments_count and comments_open.",
		ReadOnly:    true, Idempotent: true,
	}, func(ctx context.Context, in wire.IDIn) (wire.CommentsOut, error) {
		cs, n, err := svc.Comments(ctx, in.ArtifactID)
		out := wire.CommentsOut{ArtifactID: in.ArtifactID, Comments: make([]wire.Comment, len(cs)), CommentsCount: n.Total, CommentsOpen: n.Open}
		for i, c := range cs {
			out.Comments[i] = wire.ToComment(c)
		}
		return out, err
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "comment_resolve",
		Title: "Resolve or reopen a comment",
		Description: "Mark a comment done (resolved true, the default) or reopen it (false): with its delete_token, or with " +
			"writer access on the document's workarea.",
		Idempotent: true,
	}, func(ctx context.Context, in wire.ResolveIn) (wire.Comment, error) {
		resolved := in.Resolved == nil || *in.Resolved
		c, err := svc.ResolveComment(ctx, in.CommentID, resolved, in.DeleteToken)
		return wire.ToComment(c), err
	})
}
