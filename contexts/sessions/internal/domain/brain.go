package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/textsafe"
)

// A session brain's bounds (seed 002: one value at most 4 MiB).
const (
	MaxBrainValue   = 4 << 20
	MaxBrainPath    = 512
	MaxBrainEntries = 10_000
	// MaxBrainBytes bounds what one brain holds (a fork copies it whole).
	MaxBrainBytes    = 64 << 20
	DefaultBrainPage = 100
	MaxBrainPage     = 500
)

// Brain stores: a session's own brain, and the workarea's knowledge base.
const (
	StoreSession = "session"
	StoreProject = "project"
)

// Absent is the if_version that creates an entry only where none is.
const Absent = "absent"

// Rules named by brain refusals.
const (
	RuleBrainVersion = "a conditional write applies only while the stored bytes still hash to if_version (seed 002)"
	RuleBrainSize    = "one brain value is at most 4 MiB, refused before anything is stored (seed 002)"
)

// BrainEntry is one value of a session brain.
type BrainEntry struct {
	Path      string
	Content   []byte
	Version   string
	Size      int64
	UpdatedAt time.Time
}

// Kind is the namespace an entry lives in: "file" under /fs/, "kv" under
// /kv/.
func Kind(path string) string {
	if strings.HasPrefix(path, NamespaceKV) {
		return "kv"
	}
	return "file"
}

// VersionOf is the version of content: the SHA-256 of its bytes.
func VersionOf(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CheckStore accepts the session store; the knowledge base (project) is
// refused until it exists, rather than written somewhere else.
func CheckStore(store string, required bool) error {
	switch store {
	case StoreSession:
		return nil
	case "":
		if required {
			return errs.Invalid("store is required on a write: \"session\" (a write in the wrong store is silent either way)")
		}
		return nil
	case StoreProject:
		return errs.Invalid("store \"project\" is the workarea's knowledge base, not a session brain")
	}
	return errs.Invalid("store %q: want \"session\"", textsafe.Clip(store, 64))
}

// CheckPath validates a brain path: /fs/… or /kv/…, at most 512 bytes of
// UTF-8 without control characters, no empty, "." or ".." segment, no
// trailing slash.
func CheckPath(path string) error {
	switch {
	case len(path) > MaxBrainPath:
		return errs.Invalid("path: at most %d bytes, got %d", MaxBrainPath, len(path))
	case !utf8.ValidString(path):
		return errs.Invalid("path: not valid UTF-8")
	case !strings.HasPrefix(path, NamespaceFS) && !strings.HasPrefix(path, NamespaceKV):
		return errs.Invalid("path %q: brain paths start with %s (files) or %s (key-value)", textsafe.Clip(path, 64), NamespaceFS, NamespaceKV)
	case strings.HasSuffix(path, "/"):
		return errs.Invalid("path %q: names a directory; name an entry", path)
	case strings.ContainsFunc(path, badRune):
		return errs.Invalid("path: no control, format or separator characters")
	}
	for _, seg := range strings.Split(path[len(NamespaceFS):], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return errs.Invalid("path %q: no empty, \".\" or \"..\" segment", path)
		}
	}
	return nil
}

// CheckPrefix validates a listing prefix: "" (the whole brain), a
// namespace, or a path prefix inside one.
func CheckPrefix(prefix string) error {
	switch {
	case prefix == "" || prefix == NamespaceFS || prefix == NamespaceKV:
		return nil
	case len(prefix) > MaxBrainPath || !utf8.ValidString(prefix):
		return errs.Invalid("prefix: at most %d bytes of UTF-8", MaxBrainPath)
	case !strings.HasPrefix(prefix, NamespaceFS) && !strings.HasPrefix(prefix, NamespaceKV):
		return errs.Invalid("prefix %q: start with %s or %s", textsafe.Clip(prefix, 64), NamespaceFS, NamespaceKV)
	case strings.ContainsFunc(prefix, badRune):
		return errs.Invalid("prefix: no control, format or separator characters")
	}
	return nil
}

// CheckUsage refuses a write that would take a brain past its bounds:
// entries (a new one) and total bytes after the write.
func CheckUsage(entries, bytesAfter int64, newEntry bool) error {
	if newEntry && entries >= MaxBrainEntries {
		return errs.New(errs.LimitCeiling, "a session brain holds at most 10,000 entries",
			"the brain holds %d entries: delete some first", entries)
	}
	if bytesAfter > MaxBrainBytes {
		return errs.New(errs.LimitCeiling, "a session brain holds at most 64 MiB",
			"the brain would hold %d bytes: delete or shrink entries first", bytesAfter)
	}
	return nil
}

// badRune is a rune no path or prefix holds (textsafe.NameRune).
func badRune(r rune) bool { return !textsafe.NameRune(r) }

// CheckContent refuses a value over the bound.
func CheckContent(content string) error {
	if len(content) > MaxBrainValue {
		return errs.New(errs.LimitSize, RuleBrainSize, "content is %d bytes; one value is at most %d", len(content), MaxBrainValue)
	}
	if !utf8.ValidString(content) {
		return errs.Invalid("content: not valid UTF-8")
	}
	return nil
}

// CheckIfVersion validates an if_version: "", "absent", or sha256:<64 hex>.
func CheckIfVersion(v string) error {
	if v == "" || v == Absent {
		return nil
	}
	hexPart, ok := strings.CutPrefix(v, "sha256:")
	if !ok || len(hexPart) != 64 || strings.ToLower(hexPart) != hexPart {
		return errs.Invalid("if_version %q: want a version a read returned (sha256:<64 lowercase hex>) or \"absent\"", textsafe.Clip(v, 64))
	}
	if _, err := hex.DecodeString(hexPart); err != nil {
		return errs.Invalid("if_version %q: not hex", v)
	}
	return nil
}

// Matches applies a conditional write's check: stored is the version at
// the path ("" when nothing is stored there). A mismatch is
// session.conflict ending current_version=… (or current_version=absent).
func Matches(ifVersion, stored string) error {
	switch {
	case ifVersion == "":
		return nil
	case ifVersion == Absent && stored == "":
		return nil
	case ifVersion == stored:
		return nil
	}
	current := stored
	if current == "" {
		current = Absent
	}
	return errs.New(errs.SessionConflict, RuleBrainVersion, "the entry changed since that version; current_version=%s", current)
}
