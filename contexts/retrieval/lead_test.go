package retrieval

import (
	"context"
	"strings"
	"testing"

	"github.com/omlhub/oml/contexts/retrieval/internal/embed"
	"github.com/omlhub/oml/platform/pgtest"
)

// TestLeadAgrees checks that the full-text leg (retrieval.entry_tsv,
// migration 0013) and the built-in embedder (embed.LeadEnd) find the same
// lead: entry_tsv must equal the lead's tsvector at weight B followed by the
// rest's.
func TestLeadAgrees(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	texts := []string{
		"Wing flutter. The wing flutters at speed.",
		"Why? Because! Then.",
		"Heat transfer.\nMeasured at mach 6.",
		"Heat transfer.\tMeasured.",
		"Heat transfer.\r\nMeasured.",
		"Heat transfer.\vMeasured.",
		"Gist.\u00a0More words.",
		"Gist. \u00a0",
		"v1.2 ships today. Upgrade soon.",
		"Only one sentence.",
		"Only one sentence. \n ",
		"no end at all",
		strings.Repeat("x ", 149) + "y. rest", // the lead is 300 characters
		strings.Repeat("x ", 150) + "y. rest", // 302: no lead
		strings.Repeat("é ", 149) + "ü. rest", // characters, not bytes
		"Überschallströmung. Gemessen im Windkanal.",
		"",
	}
	for _, text := range texts {
		end := embed.LeadEnd(text)
		var same bool
		var got, want string
		err := db.Pool.QueryRow(ctx, `
SELECT retrieval.entry_tsv('simple', $1) = w, retrieval.entry_tsv('simple', $1)::text, w::text
FROM (SELECT CASE WHEN $2 = '' THEN to_tsvector('simple', $1)
             ELSE setweight(to_tsvector('simple', $2), 'B') || to_tsvector('simple', $3) END AS w) AS x`,
			text, text[:end], text[end:]).Scan(&same, &got, &want)
		if err != nil {
			t.Fatal(err)
		}
		if !same {
			t.Errorf("text %q: entry_tsv %s, want (lead %q) %s", text, got, text[:end], want)
		}
	}
}
