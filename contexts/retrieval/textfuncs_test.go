package retrieval

import (
	"context"
	"strings"
	"testing"

	"github.com/omlhub/oml/platform/pgtest"
)

// TestTextFunctionsKeepTheirResults checks that migration 0044's PL/pgSQL
// bodies of retrieval.entry_tsv and retrieval.scope_prefixes return what
// their LANGUAGE sql bodies (migrations 0013 and 0043) did: the stored
// tsvectors and the full-text index's prefixes were made by those, and
// nothing was re-indexed. It also calls scope_prefixes under an empty
// search_path, as pg_restore rebuilds the index.
func TestTextFunctionsKeepTheirResults(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `
CREATE FUNCTION pg_temp.sql_entry_tsv(cfg regconfig, body text) RETURNS tsvector
LANGUAGE sql IMMUTABLE AS $$
SELECT CASE
    WHEN p BETWEEN 1 AND 300 AND substr(body, p + 1) ~ '[^ \t\n\v\f\r]'
    THEN setweight(to_tsvector(cfg, left(body, p)), 'B') || to_tsvector(cfg, substr(body, p + 1))
    ELSE to_tsvector(cfg, body)
END
FROM (SELECT regexp_instr(body, '[.!?]([ \t\n\v\f\r]|$)') AS p) AS lead
$$;
CREATE FUNCTION pg_temp.sql_scope_prefixes(p ltree) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT
    RETURN array(SELECT subpath(p, 0, i)::text FROM generate_series(1, nlevel(p)) AS i);`); err != nil {
		t.Fatal(err)
	}

	texts := []*string{nil}
	for _, s := range []string{
		"", " ", ".", ". ", "a. b", "a.b. c", "Wing flutter. The wing flutters at speed.",
		"Why? Because! Then.", "Heat transfer.\nMeasured at mach 6.", "Heat transfer.\tMeasured.",
		"Heat transfer.\r\nMeasured.", "Heat transfer.\vMeasured.", "Heat transfer.\fMeasured.",
		"Gist.\u00a0More words.", "Gist. \u00a0", "v1.2 ships today. Upgrade soon.",
		"Only one sentence.", "Only one sentence. \n ", "no end at all",
		strings.Repeat("x ", 149) + "y. rest", strings.Repeat("x ", 150) + "y. rest",
		strings.Repeat("é ", 149) + "ü. rest", "Überschallströmung. Gemessen im Windkanal.",
		"The flows were measured. Running runners ran; the boundary layers separated.",
	} {
		texts = append(texts, &s)
	}
	for _, cfg := range []string{"simple", "english", "german"} {
		for _, text := range texts {
			var same bool
			var got, want *string
			if err := conn.QueryRow(ctx, `
SELECT a IS NOT DISTINCT FROM b, a::text, b::text
FROM (SELECT retrieval.entry_tsv($1::regconfig, $2) AS a, pg_temp.sql_entry_tsv($1::regconfig, $2) AS b) AS x`,
				cfg, text).Scan(&same, &got, &want); err != nil {
				t.Fatal(err)
			}
			if !same {
				t.Errorf("entry_tsv(%s, %v): %v, the sql body gave %v", cfg, deref(text), deref(got), deref(want))
			}
		}
	}

	paths := []*string{nil}
	for _, s := range []string{"", "r", "r.a", "r.a1.b3", "r.a1.b3.c7.d9", strings.TrimSuffix(strings.Repeat("x.", 40), ".")} {
		paths = append(paths, &s)
	}
	for _, path := range paths {
		var same bool
		var got, want []string
		if err := conn.QueryRow(ctx, `
SELECT a IS NOT DISTINCT FROM b, a, b
FROM (SELECT retrieval.scope_prefixes($1::ltree) AS a, pg_temp.sql_scope_prefixes($1::ltree) AS b) AS x`,
			path).Scan(&same, &got, &want); err != nil {
			t.Fatal(err)
		}
		if !same {
			t.Errorf("scope_prefixes(%v): %q, the sql body gave %q", deref(path), got, want)
		}
	}

	if _, err := conn.Exec(ctx, `SET search_path = ''`); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := conn.QueryRow(ctx, `SELECT retrieval.scope_prefixes('r.a'::public.ltree)`).Scan(&got); err != nil {
		t.Fatalf("scope_prefixes under an empty search_path: %v", err)
	}
	if strings.Join(got, ",") != "r,r.a" {
		t.Errorf("scope_prefixes under an empty search_path: %q", got)
	}
	if _, err := conn.Exec(ctx, `RESET search_path`); err != nil {
		t.Fatal(err)
	}
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return "'" + *s + "'"
}
