package journal

import "testing"

func TestStoredSimulation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ, subject, want string
	}{
		{"lifecycle.promote", `{"artifact_id":"art_1"}`, ""},
		{"lifecycle.promote", `{"artifact_id":"art_1","simulation_id":"sim_1"}`, "sim_1"},
		{"lifecycle.promote", `{"simulation_id":7}`, "unreadable"},
		{"lifecycle.promote", `{"simulation_id":""}`, "unreadable"},
		{"simulation.create", `{"simulation_id":"sim_1"}`, ""},
		{"lifecycle.promote", ``, ""},
		{"lifecycle.promote", `{"artifact_id":"art_1","claim_key":"simulation_id"}`, ""},
		{"lifecycle.promote", `{"claim_key":"simulation_id","simulation_id":"sim_2"}`, "sim_2"},
		{"lifecycle.promote", `{"simulation_id":null}`, "unreadable"},
		{"lifecycle.promote", `not json "simulation_id"`, "unreadable"},
	} {
		if got := (Stored{Type: c.typ, Subject: []byte(c.subject)}).Simulation(); got != c.want {
			t.Errorf("%s %s: Simulation() = %q, want %q", c.typ, c.subject, got, c.want)
		}
	}
}
