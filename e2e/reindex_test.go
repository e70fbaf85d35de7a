package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

type reindexReport struct {
	Model      string `json:"model"`
	Dim        int    `json:"dimensions"`
	IndexBuilt bool   `json:"vector_index_built"`
	Tenants    []struct {
		Tenant   string `json:"tenant_id"`
		Language string `json:"fts_language"`
		Entries  int    `json:"entries"`
		Embedded int    `json:"embedded"`
		Reparsed int    `json:"reparsed"`
	} `json:"tenants"`
}

// reindex runs oml-server reindex with extra environment; it returns the
// report, stderr and the exit error.
func (s *server) reindex(t testing.TB, env []string, args ...string) (reindexReport, string, error) {
	t.Helper()
	cmd := exec.Command(bins.server, append([]string{"reindex"}, args...)...)
	cmd.Env = append(append([]string{}, s.env...), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var rep reindexReport
	if err == nil {
		if jerr := json.Unmarshal(stdout.Bytes(), &rep); jerr != nil {
			t.Fatalf("reindex output %q: %v", stdout.String(), jerr)
		}
	}
	return rep, stderr.String(), err
}

// oml-server reindex re-parses full text in a new tenant language and
// re-embeds with a new model, resumably, while recall keeps answering.
func TestReindexLanguageAndModel(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	boat := s.promote(t, tm, tm.crew.ID, "boats", "", "The sailing boats cross the harbour at dawn.")
	s.promote(t, tm, tm.crew.ID, "ore", "", "Bauxite ore arrives by rail from the northern mine.")

	// A language that does not exist is refused and changes nothing.
	if _, stderr, err := s.reindex(t, nil, "--tenant", s.TenantID, "--fts-language", "klingon"); err == nil ||
		!strings.Contains(stderr, "not a text search configuration") {
		t.Fatalf("unknown language: err %v, stderr %s", err, stderr)
	}
	if _, _, err := s.reindex(t, nil, "--fts-language", "simple"); err == nil {
		t.Fatal("a language without a tenant was accepted")
	}

	// english → simple: stopwords become lexemes; nothing to re-embed.
	rep, _, err := s.reindex(t, nil, "--tenant", s.TenantID, "--fts-language", "simple")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tenants) != 1 || rep.Tenants[0].Language != "simple" || rep.Tenants[0].Entries != 2 ||
		rep.Tenants[0].Reparsed != 2 || rep.Tenants[0].Embedded != 0 || rep.IndexBuilt {
		t.Fatalf("language reindex: %+v", rep)
	}
	if n := s.count(t, `SELECT count(*) FROM retrieval.term_df WHERE tenant_id = $1 AND term = 'the' AND df = 2`, s.TenantID); n != 1 {
		t.Fatal("document frequencies were not moved to the simple parse")
	}
	if n := s.count(t, `SELECT count(*) FROM retrieval.corpus c WHERE tenant_id = $1
		AND lexemes = (SELECT sum(length(tsv)) FROM retrieval.entries e WHERE e.tenant_id = c.tenant_id)`, s.TenantID); n != 1 {
		t.Fatal("corpus length out of step with the entries")
	}

	// A new embedding dimension: every entry is re-embedded and the model
	// gets its own HNSW index; a second run has nothing left to do.
	dim64 := []string{"OML_EMBEDDINGS_DIM=64"}
	rep, _, err = s.reindex(t, dim64)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Model != "oml-builtin-v2-64" || !rep.IndexBuilt || len(rep.Tenants) != 1 || rep.Tenants[0].Embedded != 2 || rep.Tenants[0].Reparsed != 0 {
		t.Fatalf("model reindex: %+v", rep)
	}
	if n := s.count(t, `SELECT count(*) FROM pg_indexes WHERE schemaname = 'retrieval' AND indexdef LIKE '%halfvec(64)%'`); n != 1 {
		t.Fatal("no HNSW index for the new model")
	}
	if rep, _, err = s.reindex(t, dim64); err != nil || rep.IndexBuilt || rep.Tenants[0].Embedded != 0 {
		t.Fatalf("second run: %+v %v", rep, err)
	}

	// The running server still embeds with 384 dimensions: its vector leg
	// finds no rows of its model, the full-text leg still answers.
	r := decode[recallOut](t, s.do(t, "POST", "/v1/recall", tm.reader.Token,
		map[string]any{"query": "sailing boats in the harbour", "scope": tm.crew.ID}), 200)
	if ids := r.hitIDs(); len(ids) == 0 || ids[0] != boat {
		t.Fatalf("recall during a model change: %+v", r.Hits)
	}
}

// oml-server subtree-index builds an HNSW index of one tenant's entries
// under a workarea's subtree (found by id or path), reports it, builds
// nothing the second time, refuses what it cannot find, and drops it;
// recall answers throughout.
func TestSubtreeIndexCommand(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	boat := s.promote(t, tm, tm.crew.ID, "boats", "", "The sailing boats cross the harbour at dawn.")
	run := func(args ...string) (map[string]any, string, error) {
		t.Helper()
		cmd := exec.Command(bins.server, append([]string{"subtree-index"}, args...)...)
		cmd.Env = s.env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var out map[string]any
		if err == nil {
			if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil {
				t.Fatalf("subtree-index output %q: %v", stdout.String(), jerr)
			}
		}
		return out, stderr.String(), err
	}
	for _, args := range [][]string{
		{"--tenant", s.TenantID},
		{"--workarea", tm.crew.ID},
		{"--tenant", s.TenantID, "--workarea", tm.crew.ID, "extra"},
		{"--list", "--workarea", tm.crew.ID},
	} {
		if _, _, err := run(args...); err == nil {
			t.Fatalf("subtree-index %v was accepted", args)
		}
	}
	for _, args := range [][]string{
		{"--tenant", s.TenantID, "--workarea", "universe.nowhere"},
		{"--tenant", "ten_nobody", "--workarea", tm.crew.ID},
		// Text Postgres cannot hold is no workarea's name, not an
		// internal error.
		{"--tenant", s.TenantID, "--workarea", tm.crew.Path + "\xff"},
		{"--tenant", s.TenantID + "\xff", "--workarea", tm.crew.ID},
	} {
		if _, stderr, err := run(args...); err == nil || !strings.Contains(stderr, "not_found") {
			t.Fatalf("subtree-index %v: err %v, stderr %s", args, err, stderr)
		}
	}
	out, _, err := run("--tenant", s.TenantID, "--workarea", tm.crew.Path)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := out["index"].(string)
	if out["built"] != true || !strings.HasPrefix(name, "entries_subtree_") || out["tenant_id"] != s.TenantID {
		t.Fatalf("built: %v", out)
	}
	if n := s.count(t, `SELECT count(*) FROM pg_index WHERE indexrelid = to_regclass('retrieval.' || $1) AND indisvalid`, name); n != 1 {
		t.Fatalf("no valid index %s", name)
	}
	if out, _, err = run("--tenant", s.TenantID, "--workarea", tm.crew.ID); err != nil || out["built"] != false || out["index"] != name {
		t.Fatalf("built again: %v, %v", out, err)
	}
	listed := func(args ...string) []any {
		t.Helper()
		out, _, err := run(append([]string{"--list"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		indexes, _ := out["indexes"].([]any)
		return indexes
	}
	if got := listed("--tenant", s.TenantID); len(got) != 1 || got[0].(map[string]any)["index"] != name || got[0].(map[string]any)["valid"] != true {
		t.Fatalf("listed: %v", got)
	}
	if got := listed("--tenant", "ten_nobody"); len(got) != 0 {
		t.Fatalf("listed for another tenant: %v", got)
	}
	r := decode[recallOut](t, s.do(t, "POST", "/v1/recall", tm.reader.Token,
		map[string]any{"query": "sailing boats in the harbour", "scope": tm.crew.ID}), 200)
	if ids := r.hitIDs(); len(ids) == 0 || ids[0] != boat {
		t.Fatalf("recall with a subtree index: %+v", r.Hits)
	}
	if out, _, err = run("--tenant", s.TenantID, "--workarea", tm.crew.ID, "--drop"); err != nil || out["dropped"] != true || out["index"] != name {
		t.Fatalf("drop: %v, %v", out, err)
	}
	if n := s.count(t, `SELECT count(*) FROM pg_class WHERE oid = to_regclass('retrieval.' || $1)`, name); n != 0 {
		t.Fatalf("index %s left after the drop", name)
	}
	if out, _, err = run("--tenant", s.TenantID, "--workarea", tm.crew.ID, "--drop"); err != nil || out["dropped"] != false {
		t.Fatalf("drop again: %v, %v", out, err)
	}
}
