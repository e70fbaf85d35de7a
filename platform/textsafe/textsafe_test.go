package textsafe

import "testing"

func TestTerminalAndPage(t *testing.T) {
	for in, want := range map[string]string{
		"plain\nlines\tand tabs":  "plain\nlines\tand tabs",
		"red \x1b[31mtext\x1b[0m": `red \x1b[31mtext\x1b[0m`,
		"back\rspace\x07":         `back\x0dspace\x07`,
		"abc\u202Efed":            "abc<U+202E>fed",
		"\u2066isolate\u2069":     "<U+2066>isolate<U+2069>",
		"c1 \u009b31m":            `c1 \x9b31m`,
		"bad \xff byte":           "bad <U+FFFD> byte",
		"":                        "",
	} {
		if got := Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Page("a\x1b b\u202E c"); got != "a\x1b b<U+202E> c" {
		t.Errorf("Page = %q", got)
	}
}
