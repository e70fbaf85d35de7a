// Package textsafe shows text written by agents to a human without letting
// it steer the display: terminal control sequences and Unicode direction
// overrides become visible marks, so a claim cannot hide part of itself
// from its reviewer or forge lines around it.
package textsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terminal returns s with every control character but newline and tab,
// and every direction control, replaced by a visible escape such as
// \x1b or <U+202E>: safe to print to a terminal.
func Terminal(s string) string { return clean(s, true) }

// Page returns s with direction controls replaced by visible marks; the
// page's HTML escaping handles the rest.
func Page(s string) string { return clean(s, false) }

func clean(s string, terminal bool) string {
	if !needs(s, terminal) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case isBidi(r) || (terminal && r == unicode.ReplacementChar):
			fmt.Fprintf(&b, "<U+%04X>", r)
		case terminal && r != '\n' && r != '\t' && unicode.IsControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needs(s string, terminal bool) bool {
	for _, r := range s {
		if isBidi(r) || (terminal && r != '\n' && r != '\t' && (unicode.IsControl(r) || r == unicode.ReplacementChar)) {
			return true
		}
	}
	return false
}

// isBidi reports the explicit direction controls (embeddings, overrides,
// isolates and marks) that reorder how the text around them displays.
func isBidi(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

// Clip is s cut to at most max bytes at a rune start, with "…" when cut:
// what a refusal quotes of an input, never the whole of a large one.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// NameRune reports whether r may stand in a name (a brain or page path, a
// resource URI's segment): not a control, format (direction overrides,
// zero-width) or line or paragraph separator character, any of which
// would make two names look alike.
func NameRune(r rune) bool {
	return !(unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r))
}
