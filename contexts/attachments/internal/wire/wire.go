// Package wire holds the attachments context's JSON shapes (seed 000,
// oml_attach), shared by the HTTP routes and the MCP tool.
package wire

import (
	"time"

	"github.com/omlhub/oml/contexts/attachments/internal/domain"
	"github.com/omlhub/oml/platform/errs"
)

// OpenIn opens a session (POST /v1/attachments/uploads).
type OpenIn struct {
	MediaType      string `json:"media_type" jsonschema:"the file's media type, e.g. application/pdf"`
	SizeBytes      int64  `json:"size_bytes" jsonschema:"the file's exact size in bytes"`
	ExpectedDigest string `json:"expected_digest" jsonschema:"sha256:<64 hex> of the file's bytes; bytes that do not match never bind"`
	PartSizeBytes  int64  `json:"part_size_bytes,omitempty" jsonschema:"part size: a multiple of 65536 from 5 MiB to 64 MiB (default 8 MiB)"`
}

// Request converts the input.
func (in OpenIn) Request() domain.OpenRequest {
	return domain.OpenRequest{MediaType: in.MediaType, Size: in.SizeBytes, ExpectedDigest: in.ExpectedDigest, PartSize: in.PartSizeBytes}
}

// AttachIn is oml_attach's input.
type AttachIn struct {
	Action         string `json:"action" jsonschema:"open (start a session) or status (inspect one, e.g. after a crash)"`
	MediaType      string `json:"media_type,omitempty" jsonschema:"open: the file's media type"`
	SizeBytes      int64  `json:"size_bytes,omitempty" jsonschema:"open: the file's exact size in bytes"`
	ExpectedDigest string `json:"expected_digest,omitempty" jsonschema:"open: sha256:<64 hex> of the file's bytes"`
	PartSizeBytes  int64  `json:"part_size_bytes,omitempty" jsonschema:"open: part size (default 8 MiB)"`
	UploadSession  string `json:"upload_session,omitempty" jsonschema:"status: the session id"`
}

// Validate checks the action's fields.
func (in AttachIn) Validate() error {
	switch in.Action {
	case "open":
		if in.UploadSession != "" {
			return errs.Invalid("action open takes no upload_session")
		}
	case "status":
		if in.UploadSession == "" {
			return errs.Invalid("action status needs upload_session")
		}
		if in.MediaType != "" || in.SizeBytes != 0 || in.ExpectedDigest != "" || in.PartSizeBytes != 0 {
			return errs.Invalid("action status takes upload_session only")
		}
	default:
		return errs.Invalid("action must be open or status, got %q", in.Action)
	}
	return nil
}

// Session is an upload session as callers see it.
type Session struct {
	UploadSession  string    `json:"upload_session"`
	State          string    `json:"state"`
	MediaType      string    `json:"media_type"`
	SizeBytes      int64     `json:"size_bytes"`
	ExpectedDigest string    `json:"expected_digest"`
	PartSizeBytes  int64     `json:"part_size_bytes"`
	PartsExpected  int       `json:"parts_expected"`
	PartsReceived  int       `json:"parts_received"`
	BytesReceived  int64     `json:"bytes_received"`
	NextPart       *int      `json:"next_part"`
	UploadPath     string    `json:"upload_path"`
	ExpiresAt      time.Time `json:"expires_at"`
	Reason         string    `json:"reason,omitempty"`
}

// FromSession converts a session.
func FromSession(s domain.Session) Session {
	out := Session{
		UploadSession: s.ID, State: string(s.State), MediaType: s.MediaType, SizeBytes: s.Size, ExpectedDigest: s.Digest(),
		PartSizeBytes: s.PartSize, PartsExpected: s.PartsExpected(), PartsReceived: s.PartsReceived, BytesReceived: s.BytesReceived,
		UploadPath: "/v1/attachments/uploads/" + s.ID + "/parts/{part_number}", ExpiresAt: s.ExpiresAt.UTC(), Reason: s.Reason,
	}
	if n := s.NextPart(); n > 0 {
		out.NextPart = &n
	}
	return out
}

// LimitsIn is PUT /v1/attachments/limits: the tenant's ceiling in bytes,
// 0 to fall back to the deployment's.
type LimitsIn struct {
	MaxUploadBytes *int64 `json:"max_upload_bytes"`
}

// LimitsOut is a tenant's attachment size ceiling.
type LimitsOut struct {
	MaxUploadBytes           int64 `json:"max_upload_bytes"`
	DeploymentMaxUploadBytes int64 `json:"deployment_max_upload_bytes"`
	TenantSet                bool  `json:"tenant_set"`
}
