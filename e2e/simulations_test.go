package e2e

import (
	"strings"
	"testing"
)

// Simulations (D10), their first part: an admin or an operator with admin
// on the workarea starts one with an audience of the tenant's keys, lists
// and ends it, journalled; names are unique, audiences are the tenant's
// keys, an end happens once; readers are refused; a write that carries a
// simulation_id is still refused (the read fences come first).
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
	// A write carrying the simulation is not accepted yet.
	if r := s.do(t, "POST", "/v1/memories", tm.writer.Token, map[string]any{"workarea": tm.crew.ID, "claim_key": "sim", "text": "x", "simulation_id": created.ID}); r.Status < 400 {
		t.Fatalf("a simulation write was accepted: %d %s", r.Status, r.Body)
	}
	ended := decode[sim](t, s.do(t, "POST", "/v1/simulations/"+created.ID+"/end", s.AdminKey, nil), 200)
	if ended.EndedAt == nil {
		t.Fatalf("ended %+v", ended)
	}
	if r := s.do(t, "POST", "/v1/simulations/"+created.ID+"/end", s.AdminKey, nil); r.Status != 409 || r.code() != "simulation.ended" {
		t.Fatalf("a second end: %d %s", r.Status, r.Body)
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
