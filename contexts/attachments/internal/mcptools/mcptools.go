// Package mcptools registers oml_attach.
package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/attachments/internal/app"
	"github.com/omlhub/oml/contexts/attachments/internal/domain"
	"github.com/omlhub/oml/contexts/attachments/internal/wire"
	"github.com/omlhub/oml/platform/transport"
)

// Register adds the tool to t.
func Register(t *transport.Tools, svc *app.Service) {
	transport.Add(t, transport.ToolSpec{
		Name:  "oml_attach",
		Title: "Attach a file",
		Description: "Open (action: open, with media_type, size_bytes and expected_digest sha256:<hex>) or inspect " +
			"(action: status, with upload_session) a resumable upload session. The bytes do not travel over MCP: PUT " +
			"each part, in order, to upload_path on the HTTP API with the same bearer key; status says the next part " +
			"after a crash. A complete session is referenced from oml_remember's attachments.",
	}, func(ctx context.Context, in wire.AttachIn) (wire.Session, error) {
		s, err := attach(ctx, svc, in)
		if err != nil {
			// A refusal comes with the empty session: it is the answer,
			// with nothing built from that session.
			return wire.Session{}, err
		}
		return wire.FromSession(s), nil
	})
}

// attach runs the action in.
func attach(ctx context.Context, svc *app.Service, in wire.AttachIn) (domain.Session, error) {
	if err := in.Validate(); err != nil {
		return domain.Session{}, err
	}
	if in.Action == "status" {
		return svc.Status(ctx, in.UploadSession)
	}
	return svc.Open(ctx, wire.OpenIn{MediaType: in.MediaType, SizeBytes: in.SizeBytes, ExpectedDigest: in.ExpectedDigest, PartSizeBytes: in.PartSizeBytes}.Request())
}
