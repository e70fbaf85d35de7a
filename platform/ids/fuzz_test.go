package ids

import (
	"strings"
	"testing"
)

// FuzzHas: an id accepted as well formed is its prefix, an underscore and
// 26 upper-case Crockford characters (an ltree label, safe in a path and a
// URI), and round-trips through Suffix and WithSuffix; never a panic.
func FuzzHas(f *testing.F) {
	for _, s := range []string{New(Artifact), New(Workarea), "art_", "art_01M8RM8CDNA1S683ZPBM4B2E04", "art_01m8rm8cdna1s683zpbm4b2e04",
		"art_7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "art_8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "wa_01M8RM8CDNA1S683ZPBM4B2E0\x00", "art_01M8RM8CDNA1S683ZPBM4B2EÖ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []Prefix{Artifact, Workarea, Request, Document} {
			if !Has(p, s) {
				continue
			}
			suf := Suffix(s)
			if len(suf) != 26 || strings.IndexFunc(suf, func(r rune) bool { return !(r >= '0' && r <= '9' || r >= 'A' && r <= 'Z') }) >= 0 {
				t.Fatalf("%s accepted %q", p, s)
			}
			if WithSuffix(p, suf) != s {
				t.Fatalf("%q does not round-trip", s)
			}
		}
	})
}
