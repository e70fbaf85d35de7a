// Package domain holds the documents context's rules: what a document
// and its versions are, who sees what (drafts their author alone, a
// version once promoted, a public or password URL), passwords, comments
// and their anchors. It imports the standard library and
// platform/{errs,ids,textsafe} only.
package domain

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/textsafe"
)

// Bounds (seed 002: a description of 2000 characters, a label of 60
// bytes; a version's content is at most 1 MiB, as a page's).
const (
	MaxContent     = 1 << 20
	MaxTitle       = 200
	MaxDescription = 2000
	MaxLabel       = 60
	MaxComment     = 4000
	MaxQuote       = 1000
	MaxPassword    = 200
	MinPassword    = 8
	DefaultList    = 50
	MaxList        = 200
	MaxComments    = 1000
)

// Formats and visibilities.
const (
	HTML     = "html"
	Markdown = "markdown"

	Workarea = "workarea"
	Public   = "public"
	Password = "password"
)

// Absent as a base version: no promoted version yet.
const Absent = "absent"

// The states a version shows.
const (
	StatePromoted = "promoted"
	StateHeld     = "held"
)

// Document is a published document.
type Document struct {
	TenantID       string
	ID             string
	WorkareaID     string
	WorkareaIDPath string
	Format         string
	Visibility     string
	PasswordSalt   []byte
	PasswordHash   []byte
	ActorPrincipal string
	ActorKeyID     string
	SessionID      string
	CreatedAt      time.Time
}

// Key is the admission claim key of the document's versions.
func (d Document) Key() string { return "/doc/" + d.ID }

// Version is one version of a document: its text and review state from
// admission, its title, description and label from here.
type Version struct {
	ArtifactID      string
	Revision        int
	State           string
	Content         string
	Version         string // sha256:… of Content
	BaseVersion     string
	AuthorPrincipal string
	SubmittedAt     time.Time
	PromotedAt      *time.Time
	HeldExpiresAt   time.Time
	Title           string
	Description     string
	Label           string
	// Size is the content's size in bytes (listings leave Content out).
	Size int
}

// Meta is what a version carries beside its text.
type Meta struct {
	Title, Description, Label string
}

// CheckFormat validates a format.
func CheckFormat(f string) error {
	if f != HTML && f != Markdown {
		return errs.Invalid("format %q: want html or markdown", textsafe.Clip(f, 40))
	}
	return nil
}

// CheckVisibility validates a visibility and its password.
func CheckVisibility(v, password string) error {
	switch v {
	case Workarea, Public:
		if password != "" {
			return errs.Invalid("a password goes with visibility password")
		}
		return nil
	case Password:
		if n := utf8.RuneCountInString(password); n < MinPassword || len(password) > MaxPassword {
			return errs.Invalid("password: %d to %d characters", MinPassword, MaxPassword)
		}
		return nil
	}
	return errs.Invalid("visibility %q: want workarea (readers of the workarea), public or password", textsafe.Clip(v, 40))
}

// CheckContent validates a version's content.
func CheckContent(content string) error {
	switch {
	case len(content) > MaxContent:
		return errs.New(errs.LimitSize, "a document version is at most 1 MiB, refused before anything is stored",
			"content is %d bytes; one version is at most %d", len(content), MaxContent)
	case strings.TrimSpace(content) == "":
		return errs.Invalid("content is required")
	case !utf8.ValidString(content) || strings.ContainsRune(content, 0):
		return errs.Invalid("content: UTF-8 without NUL bytes")
	}
	return nil
}

// CheckMeta validates a version's title, description and label; a blank
// title on a markdown document falls back to its first heading (seed 002).
func CheckMeta(format, content string, m *Meta) error {
	m.Title = strings.TrimSpace(m.Title)
	if m.Title == "" && format == Markdown {
		m.Title = firstHeading(content)
	}
	switch {
	case m.Title == "":
		return errs.Invalid("title is required (a markdown document's first heading stands in for it)")
	case utf8.RuneCountInString(m.Title) > MaxTitle || strings.ContainsAny(m.Title, "\x00\r\n"):
		return errs.Invalid("title: one line of at most %d characters", MaxTitle)
	case utf8.RuneCountInString(m.Description) > MaxDescription || strings.ContainsRune(m.Description, 0):
		return errs.Invalid("description: at most %d characters", MaxDescription)
	case len(m.Label) > MaxLabel || strings.ContainsAny(m.Label, "\x00\r\n"):
		return errs.Invalid("label: one line of at most %d bytes", MaxLabel)
	}
	return nil
}

func firstHeading(md string) string {
	for _, line := range strings.Split(md, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "#"); ok {
			t = strings.TrimSpace(strings.TrimLeft(t, "#"))
			if t != "" {
				return textsafe.Clip(t, MaxTitle-1)
			}
		}
	}
	return ""
}

// HashPassword derives a password's stored hash with a fresh salt.
func HashPassword(password string) (salt, hash []byte, err error) {
	salt = make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return nil, nil, err
	}
	hash, err = pbkdf2.Key(sha256.New, password, salt, 210_000, 32)
	return salt, hash, err
}

// PasswordMatches compares a password with a stored hash in constant time.
func (d Document) PasswordMatches(password string) bool {
	if d.Visibility != Password || len(password) > MaxPassword {
		return false
	}
	h, err := pbkdf2.Key(sha256.New, password, d.PasswordSalt, 210_000, 32)
	return err == nil && subtle.ConstantTimeCompare(h, d.PasswordHash) == 1
}

// Comment is a comment on a document.
type Comment struct {
	TenantID        string
	ID              string
	DocumentID      string
	Revision        int
	AuthorPrincipal string
	AuthorKeyID     string
	Body            string
	AnchorOffset    *int
	AnchorQuote     string
	DeleteTokenHash []byte
	ResolvedAt      *time.Time
	ResolvedBy      string
	CreatedAt       time.Time
}

// CheckComment validates a comment and its anchor: a point (a byte offset
// into the version's content) or a quote that the version contains.
func CheckComment(body string, offset *int, quote, content string) error {
	body = strings.TrimSpace(body)
	switch {
	case body == "" || utf8.RuneCountInString(body) > MaxComment || !utf8.ValidString(body) || strings.ContainsRune(body, 0):
		return errs.Invalid("body: 1 to %d characters", MaxComment)
	case offset != nil && quote != "":
		return errs.Invalid("anchor to a point or a quote, not both")
	case offset != nil && (*offset < 0 || *offset > len(content)):
		return errs.Invalid("anchor offset %d is outside the version's %d bytes", *offset, len(content))
	case quote != "" && (utf8.RuneCountInString(quote) > MaxQuote || !strings.Contains(content, quote)):
		return errs.Invalid("anchor quote: at most %d characters the version contains", MaxQuote)
	}
	return nil
}

// NewDeleteToken returns a comment's delete token and its stored hash.
func NewDeleteToken() (token string, hash []byte, err error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	token = "oml_ct_" + base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(token))
	return token, sum[:], nil
}

// TokenMatches compares a delete token with the stored hash in constant
// time.
func (c Comment) TokenMatches(token string) bool {
	sum := sha256.Sum256([]byte(token))
	return token != "" && subtle.ConstantTimeCompare(sum[:], c.DeleteTokenHash) == 1
}
