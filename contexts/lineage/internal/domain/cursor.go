package domain

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/omlhub/oml/platform/errs"
)

// MaxGraphWalk bounds how far pages of one graph read reach: a
// continuation walks again from the roots up to its page's end, so the
// walk is bounded rather than the client's patience.
const MaxGraphWalk = 10 * MaxLimit

// GraphCursor continues a truncated graph read: the next page starts after
// Offset claims of the same query (Query is its digest, so a cursor is
// refused on any other query).
type GraphCursor struct {
	Offset int    `json:"o"`
	Query  string `json:"q"`
}

// GraphQueryDigest names one graph query: the scope's id, the roots, the
// depth and the page size.
func GraphQueryDigest(scopeID string, roots []string, depth, limit int) string {
	sum := sha256.Sum256([]byte(scopeID + "|" + strings.Join(roots, ",") + "|" + strconv.Itoa(depth) + "|" + strconv.Itoa(limit)))
	return hex.EncodeToString(sum[:12])
}

// Encode returns the cursor as the opaque string clients hold.
func (c GraphCursor) Encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseGraphCursor reads a cursor for the query with the given digest.
func ParseGraphCursor(s, digest string) (GraphCursor, error) {
	var c GraphCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Offset < 1 || c.Offset > MaxGraphWalk || c.Query == "" {
		return GraphCursor{}, errs.Invalid("cursor is not one this API returned")
	}
	if c.Query != digest {
		return GraphCursor{}, errs.Invalid("cursor belongs to another graph query: repeat the scope, roots, depth and limit of the call that returned it")
	}
	return c, nil
}
