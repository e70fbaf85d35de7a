// Package domain holds the attachments context's rules: what an upload
// session is, which part it takes next and how long each part is, and
// when the session ends. It imports the standard library and
// platform/{errs,ids} only.
package domain

import (
	"encoding/hex"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

// State is where an upload session is.
type State string

// The states: open until its last part checks out (complete) or fails
// the digest (aborted), or the owner aborts it, or it outlives its
// expiry (expired). Only open sessions take parts; only complete ones
// bind to claims.
const (
	Open     State = "open"
	Complete State = "complete"
	Aborted  State = "aborted"
	Expired  State = "expired"
)

// Bounds of an upload.
const (
	DefaultPartSize = 8 << 20
	// Part sizes are whole 64 KiB segments (the encryption format) and at
	// least S3's 5 MiB minimum for all parts but the last.
	MinPartSize = 5 << 20
	MaxPartSize = 64 << 20
	segment     = 64 << 10
	MaxParts    = 10000 // S3's limit
	DefaultTTL  = 24 * time.Hour
)

// Session is an upload session.
type Session struct {
	ID             string
	TenantID       string
	KeyID          string
	State          State
	MediaType      string
	Size           int64
	ExpectedSHA256 [32]byte
	PartSize       int64
	// Progress: parts and bytes received so far, the running SHA-256
	// state after them, and per received part its plaintext digest, its
	// store entity tag and the random id of the write that sealed it.
	PartsReceived int
	BytesReceived int64
	HashState     []byte
	PartSHA256    [][]byte
	PartETags     []string
	PartWrites    []int64
	// Address is the content address of the expected digest; the parts go
	// to a multipart upload of ObjectKey.
	Address     string
	ObjectKey   string
	StoreUpload string
	WrappedKey  []byte
	Reason      string
	CreatedAt   time.Time
	ExpiresAt   time.Time
	CompletedAt *time.Time
	// BoundAt is when a claim took the content (a session binds once).
	BoundAt *time.Time
}

// OpenRequest is what a caller asks for.
type OpenRequest struct {
	MediaType      string
	Size           int64
	ExpectedDigest string // "sha256:<64 hex>"
	PartSize       int64  // 0: DefaultPartSize
}

// Validate checks an open request against the bounds and the tenant's
// ceiling, and returns the digest.
func (r *OpenRequest) Validate(maxSize int64) ([32]byte, error) {
	var d [32]byte
	mt, _, err := mime.ParseMediaType(r.MediaType)
	if err != nil || !strings.Contains(mt, "/") || len(r.MediaType) > 200 {
		return d, errs.Invalid("media_type must be a media type such as application/pdf, got %q", r.MediaType)
	}
	r.MediaType = mt
	hexDigest, ok := strings.CutPrefix(r.ExpectedDigest, "sha256:")
	b, err := hex.DecodeString(hexDigest)
	if !ok || err != nil || len(b) != 32 {
		return d, errs.Invalid("expected_digest must be sha256:<64 hex digits>, got %q", r.ExpectedDigest)
	}
	copy(d[:], b)
	if r.Size < 0 {
		return d, errs.Invalid("size_bytes must be ≥ 0, got %d", r.Size)
	}
	if r.Size > maxSize {
		return d, errs.New(errs.LimitSize, "the tenant's attachment size ceiling",
			"size_bytes %d exceeds this tenant's ceiling of %d bytes", r.Size, maxSize)
	}
	if r.PartSize == 0 {
		r.PartSize = DefaultPartSize
	}
	if r.PartSize < MinPartSize || r.PartSize > MaxPartSize || r.PartSize%segment != 0 {
		return d, errs.Invalid("part_size_bytes must be a multiple of 65536 between %d and %d, got %d", MinPartSize, MaxPartSize, r.PartSize)
	}
	if parts(r.Size, r.PartSize) > MaxParts {
		return d, errs.New(errs.LimitSize, "an upload has at most 10,000 parts",
			"%d bytes in parts of %d would need %d parts; use larger parts", r.Size, r.PartSize, parts(r.Size, r.PartSize))
	}
	return d, nil
}

// parts is how many parts of partSize hold size bytes: at least one (an
// empty file is one empty part). A session without a part size, such as
// the zero value a refusal carries, holds none rather than dividing by
// zero.
func parts(size, partSize int64) int64 {
	if partSize <= 0 {
		return 0
	}
	return max(1, (size+partSize-1)/partSize)
}

// PartsExpected is how many parts the session takes.
func (s Session) PartsExpected() int { return int(parts(s.Size, s.PartSize)) }

// NextPart is the part the session takes next (0 when it takes none).
func (s Session) NextPart() int {
	if s.State != Open || s.PartsReceived >= s.PartsExpected() {
		return 0
	}
	return s.PartsReceived + 1
}

// PartLength is how long part n is: PartSize, but the last part holds the
// rest.
func (s Session) PartLength(n int) int64 {
	if n < s.PartsExpected() {
		return s.PartSize
	}
	return s.Size - int64(n-1)*s.PartSize
}

// Digest is the session's expected digest as "sha256:<hex>".
func (s Session) Digest() string { return "sha256:" + hex.EncodeToString(s.ExpectedSHA256[:]) }

// Lapsed reports whether the session is past its expiry at now: an open
// one takes no more parts, a complete one no longer binds.
func (s Session) Lapsed(now time.Time) bool { return !now.Before(s.ExpiresAt) }

// PartDecision is what to do with an incoming part.
type PartDecision int

// The decisions.
const (
	// Store the part: it is the next one.
	Store PartDecision = iota
	// Repeat: the part was received already; its bytes must match.
	Repeat
)

// CheckPart decides on part n with length bytes arriving at now.
func (s Session) CheckPart(n int, length int64, now time.Time) (PartDecision, error) {
	if s.State == Open && s.Lapsed(now) {
		return 0, errs.New(errs.UploadExpired, "an upload session takes parts until it expires (D3)",
			"session %s expired at %s; open a new one", s.ID, s.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if n < 1 || n > s.PartsExpected() {
		return 0, errs.New(errs.UploadPartRange, "parts are numbered 1..parts_expected",
			"session %s takes parts 1–%d, not %d", s.ID, s.PartsExpected(), n)
	}
	if n <= s.PartsReceived {
		return Repeat, nil
	}
	switch s.State {
	case Complete:
		return Repeat, nil
	case Aborted, Expired:
		return 0, errs.New(errs.UploadClosed, "only an open session takes parts (D3)",
			"session %s is %s%s; open a new one", s.ID, s.State, reason(s.Reason))
	}
	if n != s.PartsReceived+1 {
		return 0, errs.New(errs.UploadOutOfOrder, "parts arrive in order; a part that does not fit the recorded progress changes nothing",
			"session %s expects part %d next, got part %d", s.ID, s.PartsReceived+1, n)
	}
	if want := s.PartLength(n); length != want {
		code := errs.UploadPartSize
		if length > want {
			code = errs.LimitSize
		}
		return 0, errs.New(code, "every part but the last is part_size_bytes long; the last holds the rest",
			"part %d of session %s must be %d bytes, got %d", n, s.ID, want, length)
	}
	return Store, nil
}

// CheckBind decides whether the session may bind to a claim of keyID at
// now: only its own key's complete session binds, once, before it
// expires, and never one whose bytes missed their digest.
func (s Session) CheckBind(keyID string, now time.Time) error {
	switch {
	case s.KeyID != keyID:
		return Unusable("no upload session %s for this key", s.ID)
	case s.State == Aborted && s.Reason == "digest mismatch":
		return Unusable("upload session %s ended in a digest mismatch (upload.digest_mismatch); its bytes never bind", s.ID)
	case s.State != Complete:
		return Unusable("upload session %s is %s, not complete", s.ID, s.State)
	case s.BoundAt != nil:
		return Unusable("upload session %s is bound to a claim already; a session binds once, upload again", s.ID)
	case s.Lapsed(now):
		return Unusable("upload session %s expired at %s before it was bound; upload again", s.ID, s.ExpiresAt.Format(time.RFC3339))
	}
	return nil
}

// Unusable is the refusal of a session a submission may not bind.
func Unusable(format string, args ...any) error {
	return errs.New(errs.UploadUnusable, "attachments bind completed upload sessions only (D3)", format, args...)
}

func reason(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

// String is a short description for logs.
func (s Session) String() string {
	return fmt.Sprintf("%s %s %d/%d", s.ID, s.State, s.PartsReceived, s.PartsExpected())
}
