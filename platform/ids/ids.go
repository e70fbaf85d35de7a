// Package ids mints and checks OML's prefixed identifiers: a short type
// prefix, an underscore and a ULID ("wa_01JB2XCQ4T8Z9K2M5P7R1VH3ND"), so an
// id names its kind and sorts by creation time.
package ids

import (
	"crypto/rand"
	"strings"

	"github.com/oklog/ulid/v2"
)

// Prefix names the kind of an identifier.
type Prefix string

// The prefixes in use. They are part of the wire contract.
const (
	Tenant       Prefix = "tn"
	Principal    Prefix = "pr"
	Key          Prefix = "key"
	Workarea     Prefix = "wa"
	Grant        Prefix = "gr"
	Artifact     Prefix = "art"
	Upload       Prefix = "ups"
	WorkareaEdge Prefix = "we"
	ClaimEdge    Prefix = "ce"
	Session      Prefix = "ses"
	Event        Prefix = "evt"
	Serve        Prefix = "srv"
	Ban          Prefix = "ban"
	Request      Prefix = "req"
	Subscription Prefix = "sub"
	WebSession   Prefix = "web"
	Simulation   Prefix = "sim"
	Enrolment    Prefix = "enr"
	Document     Prefix = "doc"
	Comment      Prefix = "cmt"
)

// New returns a fresh identifier of the given kind. Its 80 random bits come
// from crypto/rand, so ids that act as capabilities (serve ids) cannot be
// guessed.
func New(p Prefix) string {
	return string(p) + "_" + ulid.MustNew(ulid.Now(), rand.Reader).String()
}

// Has reports whether s is a well-formed identifier of kind p.
func Has(p Prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, string(p)+"_")
	if !ok || len(rest) != ulid.EncodedSize || strings.ToUpper(rest) != rest {
		// Ids are minted upper case and stored so; the ULID parser would
		// take a lower-case spelling that no row has (found by FuzzHas).
		return false
	}
	_, err := ulid.ParseStrict(rest)
	return err == nil
}

// WithSuffix is the inverse of [Suffix]: the id of kind p whose ULID part
// (an ltree label of an id path, say) is suffix.
func WithSuffix(p Prefix, suffix string) string { return string(p) + "_" + suffix }

// Suffix returns the ULID part of a well-formed id, usable as an ltree label.
func Suffix(s string) string {
	_, rest, _ := strings.Cut(s, "_")
	return rest
}
