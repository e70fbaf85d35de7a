package e2e

import (
	"testing"

	"github.com/omlhub/oml/platform/ids"
)

// Demote and erase by a non-admin answer a claim the caller cannot read
// exactly as an unknown id: no existence oracle. A claim it can read is
// still a 403 naming the rule.
func TestLifecycleNoExistenceOracle(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	promoted := tm.promote(t, tm.author2, tm.reviewer, tm.crew.ID, "public", "Promoted and readable.")
	held := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.author2.Token,
		map[string]any{"workarea": tm.crew.ID, "claim_key": "secret", "text": "Held, and not the writer's."}), 201)
	unknown := ids.New(ids.Artifact)
	for _, verb := range []string{"demote", "erase"} {
		path := func(id string) string { return "/v1/artifacts/" + id + "/" + verb }
		body := `{"reason":"probing"}`
		miss := s.do(t, "POST", path(unknown), tm.writer.Token, body)
		if miss.Status != 404 || miss.code() != "access.not_found" {
			t.Fatalf("%s unknown: %d %s", verb, miss.Status, miss.Body)
		}
		if r := s.do(t, "POST", path(held.ArtifactID), tm.writer.Token, body); r.Status != miss.Status || !sameRefusal(r.Body, miss.Body) {
			t.Errorf("%s another writer's held claim: %d %s; an unknown id: %d %s", verb, r.Status, r.Body, miss.Status, miss.Body)
		}
		if r := s.do(t, "POST", path(promoted), tm.writer.Token, body); r.Status != 403 || r.code() != "access.denied" {
			t.Errorf("%s a readable claim: %d %s", verb, r.Status, r.Body)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM admission.artifacts WHERE state IN ('demoted', 'erased')`); n != 0 {
		t.Fatalf("a refused lifecycle verb changed %d claims", n)
	}
}
