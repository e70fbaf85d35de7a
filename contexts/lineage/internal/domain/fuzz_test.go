package domain

import (
	"testing"

	"github.com/omlhub/oml/platform/errs"
)

// FuzzParseGraphCursor: a cursor is read back only for its own query and
// within the walk's bound; anything else is request.validation.
func FuzzParseGraphCursor(f *testing.F) {
	d := GraphQueryDigest("wa_1", []string{"art_1"}, 2, 50)
	f.Add(GraphCursor{Offset: 50, Query: d}.Encode())
	f.Add(GraphCursor{Offset: MaxGraphWalk + 1, Query: d}.Encode())
	f.Add(GraphCursor{Offset: -1, Query: d}.Encode())
	f.Add("eyJvIjoxfQ")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseGraphCursor(s, d)
		if err != nil {
			if errs.From(err).Code != errs.Validation {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if c.Query != d || c.Offset < 1 || c.Offset > MaxGraphWalk {
			t.Fatalf("%q accepted as %+v", s, c)
		}
	})
}
