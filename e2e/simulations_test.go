package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Simulations (D10), their first part: an admin or an operator with admin
// on the workarea starts one with an audience of the tenant's keys, lists
// and ends it, journalled; names are unique, audiences are the tenant's
// keys, an end happens once; readers are refused; a write carrying an
// ended simulation is refused.
func TestSimulationsLifecycle(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	type sim struct {
		ID       string   `json:"simulation_id"`
		Workarea string   `json:"workarea"`
		Name     string   `json:"name"`
		Audience []string `json:"audience"`
		EndedAt  *string  `json:"ended_at"`
	}
	created := decode[sim](t, s.do(t, "POST", "/v1/simulations", s.AdminKey, map[string]any{
		"workarea": "universe.procurement.metals-crew", "name": "price-shock", "audience": []string{tm.writer.KeyID, tm.writer.KeyID}}), 201)
	if !strings.HasPrefix(created.ID, "sim_") || created.Workarea != tm.crew.ID || len(created.Audience) != 1 || created.EndedAt != nil {
		t.Fatalf("created %+v", created)
	}
	op := s.issueKey(t, "ops-1", "operator")
	s.grant(t, op.KeyID, "universe", "admin", "allow")
	second := decode[sim](t, s.do(t, "POST", "/v1/simulations", op.Token, map[string]any{
		"workarea": tm.crew.ID, "name": "drill", "audience": []string{tm.reviewer.KeyID}}), 201)
	for name, c := range map[string]struct {
		key    string
		body   map[string]any
		status int
		code   string
	}{
		"a taken name":     {s.AdminKey, map[string]any{"workarea": tm.crew.ID, "name": "price-shock", "audience": []string{tm.writer.KeyID}}, 409, "simulation.name_conflict"},
		"a bad name":       {s.AdminKey, map[string]any{"workarea": tm.crew.ID, "name": "Price Shock", "audience": []string{tm.writer.KeyID}}, 400, "request.validation"},
		"no audience":      {s.AdminKey, map[string]any{"workarea": tm.crew.ID, "name": "x", "audience": []string{}}, 400, "request.validation"},
		"a foreign key":    {s.AdminKey, map[string]any{"workarea": tm.crew.ID, "name": "x", "audience": []string{"key_01JB2XCQ4T8Z9K2M5P7R1VH3ND"}}, 404, "access.not_found"},
		"a reader":         {tm.reader.Token, map[string]any{"workarea": tm.crew.ID, "name": "x", "audience": []string{tm.writer.KeyID}}, 403, "access.denied"},
		"an unknown field": {s.AdminKey, map[string]any{"workarea": tm.crew.ID, "name": "x", "audience": []string{tm.writer.KeyID}, "ends": 1}, 400, "request.validation"},
	} {
		if r := s.do(t, "POST", "/v1/simulations", c.key, c.body); r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	list := decode[struct {
		Simulations []sim `json:"simulations"`
	}](t, s.do(t, "GET", "/v1/simulations", op.Token, nil), 200)
	if len(list.Simulations) != 2 || list.Simulations[0].ID != created.ID || list.Simulations[1].ID != second.ID {
		t.Fatalf("list: %+v", list)
	}
	if r := s.do(t, "GET", "/v1/simulations", tm.writer.Token, nil); r.Status != 403 {
		t.Fatalf("a writer lists simulations: %d %s", r.Status, r.Body)
	}
	ended := decode[sim](t, s.do(t, "POST", "/v1/simulations/"+created.ID+"/end", s.AdminKey, nil), 200)
	if ended.EndedAt == nil {
		t.Fatalf("ended %+v", ended)
	}
	if r := s.do(t, "POST", "/v1/simulations/"+created.ID+"/end", s.AdminKey, nil); r.Status != 409 || r.code() != "simulation.ended" {
		t.Fatalf("a second end: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{"workarea": tm.crew.ID, "claim_key": "sim", "text": "x", "simulation_id": created.ID}); r.Status != 409 || r.code() != "simulation.ended" {
		t.Fatalf("a write into an ended simulation: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "POST", "/v1/simulations/sim_01JB2XCQ4T8Z9K2M5P7R1VH3ND/end", s.AdminKey, nil); r.Status != 404 {
		t.Fatalf("an unknown simulation: %d %s", r.Status, r.Body)
	}
	other := s.bootstrapTenant(t, "umbrella")
	if r := s.do(t, "POST", "/v1/simulations/"+second.ID+"/end", other, nil); r.Status != 404 {
		t.Fatalf("another tenant ends it: %d %s", r.Status, r.Body)
	}
	if out := s.mustOML(t, s.AdminKey, "admin", "simulation", "list"); !strings.Contains(out, "price-shock") || !strings.Contains(out, "(2 simulations)") {
		t.Fatalf("oml admin simulation list: %s", out)
	}
	if out := s.mustOML(t, s.AdminKey, "admin", "simulation", "end", second.ID); !strings.Contains(out, "drill") || !strings.Contains(out, "ended") {
		t.Fatalf("oml admin simulation end: %s", out)
	}
	for typ, want := range map[string]int64{"simulation.create": 2, "simulation.end": 2} {
		if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE tenant_id = $1 AND event_type = $2`, s.TenantID, typ); n != want {
			t.Errorf("%s events: %d, want %d", typ, n, want)
		}
	}
}

// The fence (D10) across every read path: a simulation with an audience of
// one agent, whose rows it writes and promotes (a self-signed development
// review: no one outside the audience may be served them). Its rows are
// recalled, graphed, tailed, fed, briefed, listed and counted for that
// agent, with provenance: simulation, and absent for everyone else, the
// tenant's admin included; learning from one needs its simulation_id, a
// version keeps it, an edge refuses it; ending the simulation stops writes
// and keeps the rows fenced.
func TestSimulationFence(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	lab := s.createWorkarea(t, "universe.procurement", "lab", "--status", "development")
	s.grant(t, tm.writer.KeyID, "universe.procurement", "dreamer.propose", "allow")
	if r := s.do(t, "PUT", "/v1/review-settings", s.AdminKey, map[string]any{"self_signed_development": true}); r.Status != 200 {
		t.Fatalf("review settings: %d %s", r.Status, r.Body)
	}
	type sim struct {
		ID string `json:"simulation_id"`
	}
	trial := decode[sim](t, s.do(t, "POST", "/v1/simulations", s.AdminKey, map[string]any{
		"workarea": lab.ID, "name": "tariff-shock", "audience": []string{tm.writer.KeyID}}), 201).ID

	// A row everyone may read, beside the simulation's.
	base := tm.promote(t, tm.author2, tm.reviewer, lab.ID, "base", "Copper spot price is 9100 USD per tonne.")
	tailFrom := decode[tailOut](t, s.do(t, "GET", "/v1/events?scope="+lab.ID, tm.reader.Token, nil), 200).HeadSeq

	// Writing into the simulation: only its audience, only in its subtree.
	writer := s.mcpSession(t, tm.writer.Token, "2026-07-28")
	type written struct {
		ArtifactID   string `json:"artifact_id"`
		State        string `json:"state"`
		Provenance   string `json:"provenance"`
		SimulationID string `json:"simulation_id"`
	}
	row := toolJSON[written](t, writer, "oml_remember", map[string]any{
		"workarea": lab.ID, "claim_key": "shock", "simulation_id": trial,
		"text": "Simulated tariff shock: copper spot price doubles to 18200 USD per tonne.",
	})
	if row.State != "held" || row.Provenance != "simulation" || row.SimulationID != trial {
		t.Fatalf("simulation write: %+v", row)
	}
	for name, c := range map[string]struct {
		key  string
		body map[string]any
		code string
	}{
		"a key outside the audience": {tm.author2.Token, map[string]any{"workarea": lab.ID, "claim_key": "x", "text": "t", "simulation_id": trial}, "access.not_found"},
		"outside the subtree":        {tm.writer.Token, map[string]any{"workarea": tm.crew.ID, "claim_key": "x", "text": "t", "simulation_id": trial}, "submission.simulation_fence"},
		"a malformed id":             {tm.writer.Token, map[string]any{"workarea": lab.ID, "claim_key": "x", "text": "t", "simulation_id": "sim_nope"}, "access.not_found"},
	} {
		if r := s.do(t, "POST", "/v1/memories", c.key, c.body); r.code() != c.code {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}

	// Review: the reviewer outside the audience is neither counted nor
	// served the row; the agent reviews it self-signed.
	type queue struct {
		Claims int `json:"claims"`
	}
	if q := decode[queue](t, s.do(t, "GET", "/v1/reviews/queue", tm.reviewer.Token, nil), 200); q.Claims != 0 {
		t.Fatalf("the reviewer's queue counts the simulation row: %+v", q)
	}
	if sv, ok := s.serve(t, tm.reviewer.Token); ok {
		t.Fatalf("the reviewer was served %+v", sv)
	}
	sv := decode[served](t, s.do(t, "POST", "/v1/reviews/serve", tm.writer.Token, map[string]any{"workarea": lab.ID}), 200)
	if sv.Item.ArtifactID != row.ArtifactID || !sv.SelfSigned {
		t.Fatalf("self-signed serve: %+v", sv)
	}
	decode[map[string]any](t, s.verdict(t, tm.writer.Token, sv.ServeID, "approve"), 200)

	// Learning from it: only with its id, and the derived row is the
	// simulation's too.
	learn := map[string]any{"workarea": lab.ID, "claim_key": "shock-effect", "text": "Under the shock, margins fall by half.", "derives_from": []string{row.ArtifactID}}
	if code, body := toolError(t, writer, "oml_learn", learn); code != "submission.simulation_fence" {
		t.Fatalf("learning without the simulation: %s %s", code, body)
	}
	learn["simulation_id"] = trial
	derived := toolJSON[written](t, writer, "oml_learn", learn)
	if derived.Provenance != "simulation" {
		t.Fatalf("learned: %+v", derived)
	}
	if r := s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{"workarea": lab.ID, "supersedes": row.ArtifactID, "text": "v2"}); r.code() != "submission.simulation_fence" {
		t.Fatalf("a version outside the simulation: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "POST", "/v1/edges", tm.writer.Token, map[string]any{"kind": "claim", "from": base, "to": row.ArtifactID, "label": "contradicts"}); r.code() != "submission.simulation_fence" {
		t.Fatalf("an edge to a simulation row: %d %s", r.Status, r.Body)
	}
	if q := decode[queue](t, s.do(t, "GET", "/v1/reviews/queue", tm.reviewer.Token, nil), 200); q.Claims != 0 {
		t.Fatalf("the reviewer's queue counts the derived simulation row: %+v", q)
	}

	// Every read path, for the audience and for everyone else.
	check := func(when string) {
		t.Helper()
		for _, k := range []struct {
			name     string
			token    string
			audience bool
		}{{"writer", tm.writer.Token, true}, {"author2", tm.author2.Token, false}, {"reviewer", tm.reviewer.Token, false}, {"reader", tm.reader.Token, false}} {
			want := func(path string, got bool) {
				t.Helper()
				if got != k.audience {
					t.Errorf("%s, %s: %s shows the simulation row: %v, want %v", when, k.name, path, got, k.audience)
				}
			}
			rec := s.do(t, "POST", "/v1/recall", k.token, map[string]any{"query": "copper spot price tonne", "scope": lab.ID})
			if !strings.Contains(string(rec.Body), base) {
				t.Errorf("%s, %s: recall lost the shared row: %s", when, k.name, rec.Body)
			}
			want("recall", strings.Contains(string(rec.Body), row.ArtifactID))
			if k.audience && !strings.Contains(string(rec.Body), `"provenance":"simulation"`) {
				t.Errorf("recall without provenance: %s", rec.Body)
			}
			graph := s.do(t, "GET", "/v1/graph?scope="+lab.ID, k.token, nil)
			want("graph", strings.Contains(string(graph.Body), row.ArtifactID))
			rooted := s.do(t, "GET", "/v1/graph?scope="+lab.ID+"&roots="+base+","+row.ArtifactID, k.token, nil)
			want("graph from roots", strings.Contains(string(rooted.Body), row.ArtifactID))
			tail := s.do(t, "GET", fmt.Sprintf("/v1/events?scope=%s&after_seq=%d", lab.ID, tailFrom), k.token, nil)
			want("events tail", strings.Contains(string(tail.Body), row.ArtifactID))
			art := s.do(t, "GET", "/v1/artifacts/"+row.ArtifactID, k.token, nil)
			want("artifact", art.Status == 200)
			mine := s.do(t, "GET", "/v1/memories/mine", k.token, nil)
			want("my_work", strings.Contains(string(mine.Body), row.ArtifactID))
			cs := s.mcpSession(t, k.token, "2026-07-28")
			feed, _ := callTool(t, cs, "feed_read", map[string]any{"workarea": lab.ID, "since": tailFrom})
			want("feed_read", strings.Contains(string(feed), row.ArtifactID))
			brief, _ := callTool(t, cs, "session_brief", map[string]any{"workarea": lab.ID})
			if strings.Contains(string(brief), row.ArtifactID) && !k.audience {
				t.Errorf("%s, %s: session_brief shows the simulation row", when, k.name)
			}
			mcpRecall, _ := callTool(t, cs, "oml_recall", map[string]any{"query": "copper spot price", "scope": lab.ID})
			want("oml_recall", strings.Contains(string(mcpRecall), row.ArtifactID))
		}
		// The tenant's admin, outside the audience: its evidence file has
		// neither the rows nor their events' content.
		file := decode[json.RawMessage](t, s.do(t, "GET", "/v1/evidence?workarea="+lab.ID, s.AdminKey, nil), 200)
		if bytes.Contains(file, []byte(row.ArtifactID)) || bytes.Contains(file, []byte(derived.ArtifactID)) || !bytes.Contains(file, []byte(base)) {
			t.Errorf("%s: the admin's evidence file and the simulation rows: %.400s", when, file)
		}
		if r := s.do(t, "GET", "/v1/artifacts/"+row.ArtifactID, s.AdminKey, nil); r.Status != 404 {
			t.Errorf("%s: the admin reads the simulation row: %d", when, r.Status)
		}
		// The read log lists the agent's recalls and graph reads, without
		// the simulation's ids; demote and erase do not find the row.
		if r := s.do(t, "GET", "/v1/read-log?key_id="+tm.writer.KeyID, s.AdminKey, nil); r.Status != 200 || !strings.Contains(string(r.Body), base) || strings.Contains(string(r.Body), row.ArtifactID) {
			t.Errorf("%s: the admin's read log: %d %.300s", when, r.Status, r.Body)
		}
		for _, verb := range []string{"demote", "erase"} {
			if r := s.do(t, "POST", "/v1/artifacts/"+row.ArtifactID+"/"+verb, s.AdminKey, map[string]any{"reason": "x"}); r.Status != 404 {
				t.Errorf("%s: the admin's %s: %d %s", when, verb, r.Status, r.Body)
			}
		}
	}
	check("running")

	// An audience of two: the other member counts and is served the held
	// row; the reviewer outside it still is not.
	pair := decode[sim](t, s.do(t, "POST", "/v1/simulations", s.AdminKey, map[string]any{
		"workarea": lab.ID, "name": "pair", "audience": []string{tm.writer.KeyID, tm.author2.KeyID}}), 201).ID
	held := decode[written](t, s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{
		"workarea": lab.ID, "claim_key": "pair-note", "text": "Paired simulation note.", "simulation_id": pair}), 201)
	if q := decode[queue](t, s.do(t, "GET", "/v1/reviews/queue", tm.author2.Token, nil), 200); q.Claims != 1 {
		t.Fatalf("the other member's queue: %+v", q)
	}
	if q := decode[queue](t, s.do(t, "GET", "/v1/reviews/queue", tm.reviewer.Token, nil), 200); q.Claims != 0 {
		t.Fatalf("the reviewer's queue counts the pair's row: %+v", q)
	}
	if sv, ok := s.serve(t, tm.author2.Token); !ok || sv.Item.ArtifactID != held.ArtifactID || sv.SelfSigned {
		t.Fatalf("the other member's serve: %v %+v", ok, sv)
	}

	// A claim key names one claim per workarea and simulation: the row
	// takes nothing from anyone outside it, and a conflict inside it says
	// nothing about the outside.
	decode[written](t, s.do(t, "POST", "/v1/memories", tm.author2.Token, map[string]any{"workarea": lab.ID, "claim_key": "shock", "text": "An outside note."}), 201)
	if r := s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{"workarea": lab.ID, "claim_key": "shock", "text": "t", "simulation_id": trial}); r.code() != "submission.claim_key_conflict" {
		t.Fatalf("a second simulation row under one key: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{"workarea": lab.ID, "claim_key": "base", "text": "Simulated base.", "simulation_id": trial}); r.Status != 201 {
		t.Fatalf("a simulation row under an outside key: %d %s", r.Status, r.Body)
	}

	// Ended: no new writes; the rows stay the audience's alone.
	decode[map[string]any](t, s.do(t, "POST", "/v1/simulations/"+trial+"/end", s.AdminKey, nil), 200)
	if code, body := toolError(t, writer, "oml_remember", map[string]any{"workarea": lab.ID, "claim_key": "late", "text": "t", "simulation_id": trial}); code != "simulation.ended" {
		t.Fatalf("a write after the end: %s %s", code, body)
	}
	check("ended")
}
