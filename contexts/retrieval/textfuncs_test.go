package retrieval

import (
	"context"
	"strings"
	"testing"

	"github.com/omlhub/oml/platform/pgtest"
	"github.com/omlhub/oml/sql/migrations"
)

// TestTextFunctionsKeepTheirResults checks that migration 0044's PL/pgSQL
// bodies of retrieval.entry_tsv and retrieval.scope_prefixes return what
// their LANGUAGE sql bodies (migrations 0013 and 0043, restored by 0044's
// down migration inside a transaction rolled back) did: the stored
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
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
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
	cfgs := []string{"simple", "english", "german"}
	tsvs := func() (out []*string) {
		for _, cfg := range cfgs {
			for _, text := range texts {
				var got *string
				if err := tx.QueryRow(ctx, `SELECT retrieval.entry_tsv($1::regconfig, $2)::text`, cfg, text).Scan(&got); err != nil {
					t.Fatal(err)
				}
				out = append(out, got)
			}
		}
		return out
	}
	paths := []*string{nil}
	for _, s := range []string{"", "r", "r.a", "r.a1.b3", "r.a1.b3.c7.d9", strings.TrimSuffix(strings.Repeat("x.", 40), ".")} {
		paths = append(paths, &s)
	}
	prefixes := func() (out [][]string) {
		for _, path := range paths {
			var got []string
			if err := tx.QueryRow(ctx, `SELECT retrieval.scope_prefixes($1::ltree)`, path).Scan(&got); err != nil {
				t.Fatal(err)
			}
			out = append(out, got)
		}
		return out
	}

	// The new bodies' answers, then the old ones' (0044's down migration,
	// rolled back at the end).
	newTSV, newPrefixes := tsvs(), prefixes()
	down, err := migrations.FS.ReadFile("0044_text_functions_plpgsql.down.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, string(down)); err != nil {
		t.Fatal(err)
	}
	oldTSV, oldPrefixes := tsvs(), prefixes()
	for i := range newTSV {
		cfg, text := cfgs[i/len(texts)], texts[i%len(texts)]
		if deref(newTSV[i]) != deref(oldTSV[i]) {
			t.Errorf("entry_tsv(%s, %v): %v, the sql body gave %v", cfg, deref(text), deref(newTSV[i]), deref(oldTSV[i]))
		}
	}
	for i, path := range paths {
		if (newPrefixes[i] == nil) != (oldPrefixes[i] == nil) || strings.Join(newPrefixes[i], ",") != strings.Join(oldPrefixes[i], ",") {
			t.Errorf("scope_prefixes(%v): %q, the sql body gave %q", deref(path), newPrefixes[i], oldPrefixes[i])
		}
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
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
