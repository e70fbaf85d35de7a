package transport

import (
	"strings"
	"testing"
)

func TestParseKBURI(t *testing.T) {
	t.Parallel()
	for uri, want := range map[string]string{
		"oml://kb/wa_1/runbook.md":                  "wa_1 /fs/runbook.md",
		"oml://kb/homelab/svc/caddy%20notes.md":     "homelab /fs/svc/caddy notes.md",
		"oml://kb/universe.ops/a/b/c.md":            "universe.ops /fs/a/b/c.md",
		"oml://kb/wa_1":                             "",
		"oml://kb/wa_1/":                            "",
		"oml://kb//a.md":                            "",
		"oml://kb/wa_1/a//b.md":                     "",
		"oml://kb/wa_1/a/../b.md":                   "",
		"oml://kb/../a.md":                          "",
		"oml://kb/wa_1/a%2Fb.md":                    "",
		"oml://kb/wa_1/a%00b.md":                    "",
		"oml://kb/wa_1/a\x00b.md":                   "",
		"oml://kb/wa_1/a%E2%80%AEb.md":              "",
		"oml://kb/wa_1/%ff.md":                      "",
		"oml://kb/wa_1/%zz.md":                      "",
		"oml://kb/wa_1/" + strings.Repeat("a", 520): "",
		"oml://other/x":                             "",
	} {
		w, p, err := parseKBURI(uri)
		got := ""
		if err == nil {
			got = w + " " + p
		}
		if got != want {
			t.Errorf("parseKBURI(%q) = %q, %v; want %q", uri, got, err, want)
		}
	}
}
