// Package domain holds the knowledge context's rules: what a page path
// is, a page's bounds, and what a page version shows. It imports the
// standard library and platform/{errs,textsafe} only.
package domain

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/textsafe"
)

// A knowledge base's bounds (seed 002: one page at most 1 MiB, pages only
// under /fs/).
const (
	Namespace   = "/fs/"
	MaxPath     = 512
	MaxPage     = 1 << 20
	DefaultPage = 100
	MaxListPage = 500
	// Absent as an if_version creates a page only where none is live.
	Absent = "absent"
)

// The states a page version shows.
const (
	StatePromoted = "promoted"
	StateHeld     = "held"
)

// Version is one version of a page, as the knowledge base shows it.
type Version struct {
	ArtifactID      string
	WorkareaID      string
	Path            string
	Number          int // the page's version number (1, 2, …)
	State           string
	Content         string
	Version         string // sha256:… of Content
	BaseVersion     string
	AuthorKeyID     string
	AuthorPrincipal string
	SubmittedAt     time.Time
	PromotedAt      *time.Time
	HeldExpiresAt   time.Time
	SourceSession   string
	StaleAfter      *time.Time
	// Size is the content's size in bytes (listings leave Content out).
	Size int64
}

// EmptyVersion is the version of an empty text: a deletion's.
const EmptyVersion = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Bytes is the content's size: Size where a listing left the content
// out, else the content's length.
func (v Version) Bytes() int64 { return max(v.Size, int64(len(v.Content))) }

// Deleted reports whether v is a deletion's tombstone.
func (v Version) Deleted() bool { return v.Version == EmptyVersion }

// CheckPath validates a page path: /fs/…, at most 512 bytes of UTF-8
// without control, format or separator characters, no empty, "." or ".."
// segment (so every page has one oml://kb/ URI and back).
func CheckPath(path string) error {
	switch {
	case len(path) > MaxPath:
		return errs.Invalid("path: at most %d bytes, got %d", MaxPath, len(path))
	case !utf8.ValidString(path):
		return errs.Invalid("path: not valid UTF-8")
	case !strings.HasPrefix(path, Namespace):
		return errs.Invalid("path %q: a knowledge base holds pages only, under %s (it has no /kv/)", textsafe.Clip(path, 64), Namespace)
	case strings.ContainsFunc(path, badRune):
		return errs.Invalid("path: no control, format or separator characters")
	}
	for _, seg := range strings.Split(path[len(Namespace):], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return errs.Invalid("path %q: no empty, \".\" or \"..\" segment", textsafe.Clip(path, 64))
		}
	}
	return nil
}

// CheckPrefix validates a listing prefix: "" or a prefix under /fs/.
func CheckPrefix(prefix string) error {
	switch {
	case prefix == "":
		return nil
	case len(prefix) > MaxPath || !utf8.ValidString(prefix):
		return errs.Invalid("prefix: at most %d bytes of UTF-8", MaxPath)
	case !strings.HasPrefix(prefix, Namespace):
		return errs.Invalid("prefix %q: pages live under %s", textsafe.Clip(prefix, 64), Namespace)
	case strings.ContainsFunc(prefix, badRune):
		return errs.Invalid("prefix: no control, format or separator characters")
	}
	return nil
}

// CheckContent refuses an empty page (a deletion is its own request) and
// one over 1 MiB, before anything is stored.
func CheckContent(content string) error {
	switch {
	case len(content) > MaxPage:
		return errs.New(errs.LimitSize, "a knowledge-base page is at most 1 MiB, refused before anything is stored (seed 002)",
			"content is %d bytes; one page is at most %d", len(content), MaxPage)
	case content == "":
		return errs.Invalid("content is empty: a page is deleted with DELETE /v1/kb, reviewed like any version")
	case strings.ContainsRune(content, 0):
		return errs.Invalid("content: no NUL bytes")
	case !utf8.ValidString(content):
		return errs.Invalid("content: not valid UTF-8")
	}
	return nil
}

// CheckIfVersion validates an if_version: "", "absent", or sha256:<64 hex>.
func CheckIfVersion(v string) error {
	if v == "" || v == Absent {
		return nil
	}
	h, ok := strings.CutPrefix(v, "sha256:")
	if !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return errs.Invalid("if_version %q: want sha256:<64 lowercase hex> (a version a read returned) or absent", textsafe.Clip(v, 80))
	}
	return nil
}

func badRune(r rune) bool { return !textsafe.NameRune(r) }
