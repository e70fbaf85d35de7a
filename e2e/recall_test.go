package e2e

import (
	"slices"
	"strings"
	"testing"
)

type recallOut struct {
	Steering []struct {
		ArtifactID   string `json:"artifact_id"`
		Kind         string `json:"kind"`
		Text         string `json:"text"`
		WorkareaPath string `json:"workarea_path"`
	} `json:"steering"`
	Hits []struct {
		ArtifactID   string  `json:"artifact_id"`
		ClaimKey     string  `json:"claim_key"`
		State        string  `json:"state"`
		Score        float64 `json:"score"`
		Text         string  `json:"text"`
		WorkareaPath string  `json:"workarea_path"`
	} `json:"hits"`
}

// promote remembers a claim as the team's writer and has its reviewer
// approve it; it returns the artifact id.
func (s *server) promote(t testing.TB, tm team, workarea, key, kind, text string) string {
	t.Helper()
	body := map[string]any{"workarea": workarea, "claim_key": key, "text": text}
	if kind != "" {
		body["kind"] = kind
	}
	got := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token, body), 201)
	srv, ok := s.serve(t, tm.reviewer.Token)
	if !ok || srv.Item.ArtifactID != got.ArtifactID {
		t.Fatalf("serve %s: %v %+v", key, ok, srv)
	}
	decode[map[string]any](t, s.verdict(t, tm.reviewer.Token, srv.ServeID, "approve"), 200)
	return got.ArtifactID
}

func (r recallOut) hitIDs() []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.ArtifactID)
	}
	return out
}

// Recall from the crew scope: the ancestor's steering first, hits from the
// scope's subtree only, never held, demoted, erased, denied or foreign rows.
func TestRecallScopedSteeringFirst(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	secret := s.createWorkarea(t, tm.crew.ID, "secret")
	s.grant(t, tm.reader.KeyID, secret.ID, "reader", "deny")

	promote := func(workarea, key, kind, text string) string { return s.promote(t, tm, workarea, key, kind, text) }
	steer := promote("universe.procurement", "policy", "steering", "Prefer quotes with an explicit validity date; treat undated quotes as expired.")
	quote := promote(tm.crew.ID, "quote-am", "", "Supplier Accra Metals quoted 412 USD/t aluminium for Q1-2027 delivery, valid until 2026-11-15.")
	upstream := promote("universe.procurement", "market", "", "Aluminium spot prices rose in November; Accra Metals remains the cheapest supplier.")
	denied := promote(secret.ID, "secret-quote", "", "Confidential: Accra Metals aluminium quote for the defence contract.")
	demoted := promote(tm.crew.ID, "old-quote", "", "Accra Metals quoted 450 USD/t aluminium in Q3.")
	erased := promote(tm.crew.ID, "wrong-quote", "", "Accra Metals aluminium quote entered in error.")
	s.mustOML(t, s.AdminKey, "artifact", "demote", demoted, "--reason", "stale")
	s.mustOML(t, s.AdminKey, "artifact", "erase", erased, "--reason", "error")
	// Held: submitted, never ratified.
	held := decode[remembered](t, s.do(t, "POST", "/v1/memories", tm.writer.Token,
		map[string]any{"workarea": tm.crew.ID, "claim_key": "held", "text": "Accra Metals aluminium quote still in review."}), 201)

	query := map[string]any{"query": "current aluminium quote Accra Metals validity", "scope": tm.crew.ID, "k": 10}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		r := toolJSON[recallOut](t, s.mcpSession(t, tm.reader.Token, era), "oml_recall", query)
		if len(r.Steering) != 1 || r.Steering[0].ArtifactID != steer || r.Steering[0].WorkareaPath != "universe.procurement" {
			t.Fatalf("%s steering: %+v", era, r.Steering)
		}
		ids := r.hitIDs()
		if len(ids) == 0 || ids[0] != quote || r.Hits[0].WorkareaPath != "universe.procurement.metals-crew" || r.Hits[0].State != "promoted" || r.Hits[0].Score <= 0 {
			t.Fatalf("%s hits: %+v", era, r.Hits)
		}
		for _, bad := range []string{upstream, denied, demoted, erased, held.ArtifactID, steer} {
			if slices.Contains(ids, bad) {
				t.Fatalf("%s: hit %s must not appear: %v", era, bad, ids)
			}
		}
	}
	// The same over HTTP, and from the wider scope the ancestor's memory joins.
	wide := decode[recallOut](t, s.do(t, "POST", "/v1/recall", tm.reader.Token,
		map[string]any{"query": "aluminium Accra Metals", "scope": "universe.procurement"}), 200)
	if !slices.Contains(wide.hitIDs(), upstream) || !slices.Contains(wide.hitIDs(), quote) || slices.Contains(wide.hitIDs(), denied) {
		t.Fatalf("wide recall: %v", wide.hitIDs())
	}
	// The writer, who may read the secret subtree, finds it.
	if w := decode[recallOut](t, s.do(t, "POST", "/v1/recall", tm.writer.Token, query), 200); !slices.Contains(w.hitIDs(), denied) {
		t.Fatalf("writer's recall lacks the secret claim: %v", w.hitIDs())
	}
	// Out of scope is nonexistent; another tenant sees nothing.
	if r := s.do(t, "POST", "/v1/recall", tm.reader.Token, map[string]any{"query": "x", "scope": secret.ID}); r.Status != 404 || r.code() != "access.not_found" {
		t.Fatalf("denied scope: %d %s", r.Status, r.Body)
	}
	var other struct {
		AdminKey string `json:"admin_key"`
	}
	_ = jsonUnmarshal(s.run(t, "bootstrap", "--tenant", "globex"), &other)
	if r := decode[recallOut](t, s.do(t, "POST", "/v1/recall", other.AdminKey, map[string]any{"query": "Accra Metals aluminium", "scope": "universe"}), 200); len(r.Hits)+len(r.Steering) != 0 {
		t.Fatalf("another tenant recalls %+v", r)
	}
	for _, bad := range []map[string]any{{"query": "", "scope": tm.crew.ID}, {"query": "x", "scope": tm.crew.ID, "k": 51}, {"query": "x"}} {
		if r := s.do(t, "POST", "/v1/recall", tm.reader.Token, bad); r.Status/100 != 4 {
			t.Fatalf("%v: %d", bad, r.Status)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM retrieval.read_log`); n < 5 {
		t.Fatalf("read log has %d rows", n)
	}
	if !strings.Contains(s.mustOML(t, s.AdminKey, "admin", "journal", "verify"), "ok") {
		t.Fatal("journal broken")
	}
}
