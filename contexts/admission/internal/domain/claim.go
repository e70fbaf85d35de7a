// Package domain holds the admission context's rules: what a submission
// is, the claim lifecycle (held → promoted | rejected | expired, promoted →
// demoted, any → erased), review policy and independence (R2, R3), the
// serve lease (D14) and the built-in scanner. It imports the standard
// library and platform/{errs,ids} only.
package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/errs"
)

// Kind is what a claim is.
type Kind string

// The kinds.
const (
	KindMemory      Kind = "memory"
	KindDerivedFact Kind = "derived_fact"
	KindSteering    Kind = "steering"
	// KindPage is a knowledge-base page version: submitted by the
	// knowledge context only (never through ParseKind), its claim key the
	// page's path under /fs/, any writer's version continuing it.
	KindPage Kind = "page"
	// KindDocument is a published document's version (the documents
	// context's), versioned like a page, its claim key /doc/<id>.
	KindDocument Kind = "document"
)

// Versioned reports whether a kind's versions continue one another
// whoever writes them, under a base version (pages and documents; a
// claim's versions are its author's, by supersedes).
func (k Kind) Versioned() bool { return k == KindPage || k == KindDocument }

// keyPrefix is the claim key namespace of a versioned kind.
func (k Kind) keyPrefix() string {
	if k == KindDocument {
		return "/doc/"
	}
	return "/fs/"
}

// Page limits and markers.
const (
	// MaxPageBytes bounds one page version's text (seed 002: 1 MiB).
	MaxPageBytes = 1 << 20
	// Absent as a base version means "no live page at the path".
	Absent = "absent"
)

// PageVersion is the version of a page text: the SHA-256 of its bytes.
func PageVersion(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// PageConflict refuses a page version written against a head that is no
// longer the page's promoted head; the message ends with the current one
// (seed 002's conflict tail).
func PageConflict(path, base, current string) error {
	return errs.New(errs.PageConflict, "a page version names the promoted head it was written against (if_version); it is checked when submitted and again at promotion",
		"page %s was written against %s, but its promoted head is another: current_version=%s", path, base, current)
}

// ParseKind reads a kind; "" is memory.
func ParseKind(s string) (Kind, error) {
	switch Kind(s) {
	case "":
		return KindMemory, nil
	case KindMemory, KindDerivedFact, KindSteering:
		return Kind(s), nil
	}
	return "", errs.Invalid("kind %q: want memory, derived_fact or steering", s)
}

// State is where a claim stands.
type State string

// The states.
const (
	StateHeld     State = "held"
	StatePromoted State = "promoted"
	StateRejected State = "rejected"
	StateExpired  State = "expired"
	StateDemoted  State = "demoted"
	StateErased   State = "erased"
)

// ParseState reads a state filter.
func ParseState(s string) (State, error) {
	switch State(s) {
	case StateHeld, StatePromoted, StateRejected, StateExpired, StateDemoted, StateErased:
		return State(s), nil
	}
	return "", errs.Invalid("state %q: want held, promoted, rejected, expired, demoted or erased", s)
}

// Verb is how a claim was submitted.
type Verb string

// The submission verbs.
const (
	VerbRemember Verb = "remember"
	VerbLearn    Verb = "learn"
)

// Limits a submission must respect.
const (
	MaxDerivesFrom  = 64
	MaxAttachments  = 16
	MaxClaimKeyLen  = 128
	DefaultTextSize = 256 << 10
)

var claimKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$`)

// Submission is a validated request to remember or learn.
type Submission struct {
	Verb         Verb
	Workarea     string // ref as given; resolved by the access port
	ClaimKey     string
	Kind         Kind
	Text         string
	DerivesFrom  []string
	Uploads      []string // upload session ids
	Supersedes   string   // artifact id of the caller's claim this versions
	SimulationID string
	// BaseVersion (pages only) is the promoted head the version was written
	// against: a PageVersion, Absent, or "" for last writer wins.
	BaseVersion string
}

// Validate checks what can be checked without storage.
func (s *Submission) Validate(maxText int) error {
	if s.Verb != VerbRemember && s.Verb != VerbLearn {
		return errs.Invalid("verb %q: want remember or learn", s.Verb)
	}
	if s.Workarea == "" {
		return errs.Invalid("workarea is required")
	}
	if s.Kind.Versioned() {
		return s.validatePage()
	}
	if s.BaseVersion != "" {
		return errs.Invalid("base_version is for knowledge-base pages")
	}
	if s.Supersedes == "" && !claimKey.MatchString(s.ClaimKey) {
		return errs.Invalid("claim_key %q: want 1–128 characters of letters, digits and . _ : / @ -, starting with a letter or digit", s.ClaimKey)
	}
	if s.ClaimKey != "" && !claimKey.MatchString(s.ClaimKey) {
		return errs.Invalid("claim_key %q: want 1–128 characters of letters, digits and . _ : / @ -", s.ClaimKey)
	}
	if s.Verb == VerbLearn {
		if len(s.DerivesFrom) == 0 {
			return errs.New(errs.LineageRequired,
				"oml_learn declares its lineage: derives_from must be non-empty (use oml_remember with kind derived_fact otherwise)",
				"derives_from is empty; a learned fact names the artifacts it derives from")
		}
		if s.Kind == KindMemory || s.Kind == "" {
			s.Kind = KindDerivedFact
		}
		if s.Kind != KindDerivedFact {
			return errs.Invalid("learn submits kind derived_fact, not %s", s.Kind)
		}
	}
	if strings.TrimSpace(s.Text) == "" {
		return errs.Invalid("text is required")
	}
	if !utf8.ValidString(s.Text) {
		return errs.Invalid("text is not valid UTF-8")
	}
	if len(s.Text) > maxText {
		return errs.New(errs.LimitSize, "claim text is bounded (OML_MAX_TEXT_BYTES)", "text is %d bytes; the limit is %d", len(s.Text), maxText)
	}
	if len(s.DerivesFrom) > MaxDerivesFrom {
		return errs.Invalid("derives_from names %d artifacts; at most %d", len(s.DerivesFrom), MaxDerivesFrom)
	}
	if len(s.Uploads) > MaxAttachments {
		return errs.Invalid("attachments names %d sessions; at most %d", len(s.Uploads), MaxAttachments)
	}
	seen := map[string]bool{}
	for _, d := range s.DerivesFrom {
		if seen[d] {
			return errs.Invalid("derives_from names %s twice", d)
		}
		seen[d] = true
	}
	return nil
}

// validatePage checks a page's or document's version as its context
// hands it over: its path as claim key, a text of at most MaxPageBytes
// (empty is a page deletion's tombstone), nothing a claim alone may carry.
func (s *Submission) validatePage() error {
	switch {
	case s.Verb != VerbRemember:
		return errs.Invalid("a %s version is remembered, not %s", s.Kind, s.Verb)
	case !strings.HasPrefix(s.ClaimKey, s.Kind.keyPrefix()) || len(s.ClaimKey) > 512:
		return errs.Invalid("a %s's key is %s… (at most 512 bytes)", s.Kind, s.Kind.keyPrefix())
	case s.Kind == KindDocument && s.Text == "":
		return errs.Invalid("content is required")
	case len(s.DerivesFrom) > 0 || len(s.Uploads) > 0 || s.Supersedes != "" || s.SimulationID != "":
		return errs.Invalid("a page version carries no lineage, attachments, supersedes or simulation")
	case !utf8.ValidString(s.Text) || strings.ContainsRune(s.Text, 0):
		return errs.Invalid("content is not valid UTF-8 without NUL bytes")
	case len(s.Text) > MaxPageBytes:
		return errs.New(errs.LimitSize, "a knowledge-base page is at most 1 MiB (seed 002)", "content is %d bytes; the limit is %d", len(s.Text), MaxPageBytes)
	case s.BaseVersion != "" && s.BaseVersion != Absent && !pageVersion.MatchString(s.BaseVersion):
		return errs.Invalid("if_version %q: want sha256:<64 hex> or absent", s.BaseVersion)
	}
	return nil
}

var pageVersion = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// Claim is one version of a claim: an artifact.
type Claim struct {
	ID                string
	TenantID          string
	WorkareaID        string
	WorkareaIDPath    string
	ClaimKey          string
	Version           int
	Kind              Kind
	Verb              Verb
	State             State
	Text              string
	AuthorKeyID       string
	AuthorPrincipal   string
	Supersedes        string
	SimulationID      string
	DerivesFrom       []string
	Findings          []Finding
	Attachments       []Attachment
	RequiredApprovals int
	Approvals         int
	SelfSigned        bool
	SubmittedAt       time.Time
	HeldExpiresAt     time.Time
	PromotedAt        *time.Time
	SettledAt         *time.Time
	// Envelope is the signed canonical record of the submission and
	// Signature its Ed25519 signature by the deployment key.
	Envelope  []byte
	Signature []byte
	// LeasedUntil is when the open serve's lease ends (nil when none).
	LeasedUntil *time.Time
	// PageVersion and BaseVersion are a versioned kind's (pages and
	// documents):
	// its text's hash, and the head it was written against.
	PageVersion string
	BaseVersion string
	// TextBytes is the text's size (set where the text itself is not read).
	TextBytes int
}

// EmptyVersion is the version of an empty text: a page deletion's.
const EmptyVersion = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Tombstone reports whether c is a page's deletion.
func (c Claim) Tombstone() bool { return c.Kind == KindPage && c.PageVersion == EmptyVersion }

// Attachment is a bound upload: its plaintext digest and what it is.
type Attachment struct {
	SHA256    string
	MediaType string
	SizeBytes int64
}

// NewestVersion returns, of c and the other promoted versions of its
// claim, the one recall serves: the highest version.
func NewestVersion(c Claim, promoted []Claim) Claim {
	newest := c
	for _, v := range promoted {
		if v.Version > newest.Version {
			newest = v
		}
	}
	return newest
}

// Expired reports whether a held claim is past its expiry at now.
func (c Claim) Expired(now time.Time) bool {
	return c.State == StateHeld && !now.Before(c.HeldExpiresAt)
}

// VisibleTo reports whether the claim's content may be shown to a key of
// principal (R3): promoted claims to readers, held ones only to their
// author (reviewers see them through a serve).
func (c Claim) VisibleTo(principal string) bool {
	switch c.State {
	case StatePromoted:
		return true
	case StateErased:
		return false
	}
	return c.AuthorPrincipal == principal
}

// Demote takes a promoted claim out of recall.
func (c *Claim) Demote(now time.Time) error {
	if c.State != StatePromoted {
		return errs.New(errs.BadTransition, "lifecycle: only a promoted claim is demoted", "artifact %s is %s, not promoted", c.ID, c.State)
	}
	c.State, c.SettledAt = StateDemoted, &now
	return nil
}

// Erase removes a claim's text, attachment bindings and findings, keeping
// a tombstone (its identity and signed envelope, which binds only the
// text's digest).
func (c *Claim) Erase(now time.Time) error {
	if c.State == StateErased {
		return errs.New(errs.BadTransition, "lifecycle: a claim is erased once", "artifact %s is already erased", c.ID)
	}
	c.State, c.SettledAt, c.LeasedUntil = StateErased, &now, nil
	c.Text, c.Attachments, c.Findings = "", nil, nil
	return nil
}
