package e2e

import (
	"strings"
	"sync"
	"testing"
)

// The routes this sitting added, fed what an attacker sends: NULs, wrong
// types, zero and out-of-range values, ids of other tenants, forged
// cursors and concurrent duplicates. Each is a typed refusal that changes
// nothing, and the server keeps answering.
func TestGovernanceInputs(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	other := s.bootstrapTenant(t, "cyberdyne")
	otherKey := decode[issuedKey](t, s.do(t, "POST", "/v1/keys", other, map[string]any{"principal": "x", "role": "writer"}), 201)
	events := func() int64 {
		return s.count(t, `SELECT count(*) FROM platform.journal_events WHERE tenant_id = $1`, s.TenantID)
	}
	before := events()
	for name, c := range map[string]struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		"simulation: a NUL in the name":        {"POST", "/v1/simulations", map[string]any{"workarea": tm.crew.ID, "name": "a\x00b", "audience": []string{tm.writer.KeyID}}, 400, "request.validation"},
		"simulation: a NUL in the workarea":    {"POST", "/v1/simulations", map[string]any{"workarea": "universe\x00", "name": "a", "audience": []string{tm.writer.KeyID}}, 400, "request.validation"},
		"simulation: audience not a list":      {"POST", "/v1/simulations", map[string]any{"workarea": tm.crew.ID, "name": "a", "audience": tm.writer.KeyID}, 400, "request.validation"},
		"simulation: an empty key id":          {"POST", "/v1/simulations", map[string]any{"workarea": tm.crew.ID, "name": "a", "audience": []string{""}}, 404, "access.not_found"},
		"simulation: another tenant's key":     {"POST", "/v1/simulations", map[string]any{"workarea": tm.crew.ID, "name": "a", "audience": []string{otherKey.KeyID}}, 404, "access.not_found"},
		"simulation: no workarea":              {"POST", "/v1/simulations", map[string]any{"name": "a", "audience": []string{tm.writer.KeyID}}, 400, "request.validation"},
		"simulation: end a NUL id":             {"POST", "/v1/simulations/sim_%00/end", nil, 400, "request.validation"},
		"quota: a string":                      {"PUT", "/v1/quotas", map[string]any{"writes_per_minute": "10"}, 400, "request.validation"},
		"quota: too many":                      {"PUT", "/v1/quotas", map[string]any{"writes_per_minute": 1_000_001}, 400, "request.validation"},
		"quota: a NUL key":                     {"PUT", "/v1/quotas", map[string]any{"key_id": "key_\x00", "requests_per_minute": 5}, 400, "request.validation"},
		"quota: another tenant's key":          {"PUT", "/v1/quotas", map[string]any{"key_id": otherKey.KeyID, "requests_per_minute": 5}, 404, "access.not_found"},
		"quota: nothing":                       {"PUT", "/v1/quotas", map[string]any{}, 400, "request.validation"},
		"grants: a NUL key":                    {"GET", "/v1/grants?key_id=%00", nil, 400, "request.validation"},
		"grants: an epoch word":                {"GET", "/v1/grants?workarea=universe&epoch=abc", nil, 400, "request.validation"},
		"grants: another tenant's key":         {"GET", "/v1/grants?key_id=" + otherKey.KeyID, nil, 404, "access.not_found"},
		"read log: a zero cursor":              {"GET", "/v1/read-log?key_id=" + tm.reader.KeyID + "&cursor=0", nil, 400, "request.validation"},
		"read log: a negative cursor":          {"GET", "/v1/read-log?key_id=" + tm.reader.KeyID + "&cursor=-5", nil, 400, "request.validation"},
		"read log: a zero limit means default": {"GET", "/v1/read-log?key_id=" + tm.reader.KeyID + "&limit=0", nil, 200, ""},
		"workareas: a negative limit":          {"GET", "/v1/workareas?limit=-1", nil, 422, "limit.ceiling"},
		"evidence: a NUL time":                 {"GET", "/v1/evidence?workarea=universe&from=%00", nil, 400, "request.validation"},
		"evidence: another tenant's workarea":  {"GET", "/v1/evidence?workarea=" + s.RootID + "x", nil, 404, "access.not_found"},
		"serve: skip not a list":               {"POST", "/v1/reviews/serve", map[string]any{"skip": "art_x"}, 400, "request.validation"},
		"serve: a NUL in skip":                 {"POST", "/v1/reviews/serve", map[string]any{"skip": []string{"art_\x00"}}, 400, "request.validation"},
		"serve: 101 skipped":                   {"POST", "/v1/reviews/serve", map[string]any{"skip": make([]string, 101)}, 400, "request.validation"},
		"a serve: unknown":                     {"GET", "/v1/reviews/srv_01JB2XCQ4T8Z9K2M5P7R1VH3ND", nil, 404, "access.not_found"},
		"a serve: a NUL":                       {"GET", "/v1/reviews/srv_%00", nil, 400, "request.validation"},
		"inbox: a bad order":                   {"GET", "/v1/inbox?order=up", nil, 400, "request.validation"},
		"sign-in code: an unknown field":       {"POST", "/v1/web/sign-in-codes", map[string]any{"ttl": 99999}, 400, "request.validation"},
	} {
		key := s.AdminKey
		if strings.HasPrefix(name, "serve") || strings.HasPrefix(name, "a serve") {
			key = tm.reviewer.Token
		}
		r := s.do(t, c.method, c.path, key, c.body)
		if r.Status != c.status || (c.code != "" && r.code() != c.code) {
			t.Errorf("%s: %d %s, want %d %s", name, r.Status, r.Body, c.status, c.code)
		}
	}
	if n := events(); n != before {
		t.Errorf("refused requests appended %d journal events", n-before)
	}
	if n := s.count(t, `SELECT count(*) FROM admission.serves`); n != 0 {
		t.Errorf("refused serves leased %d items", n)
	}

	// Concurrent duplicates: one simulation of a name, and the rest told.
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = s.do(t, "POST", "/v1/simulations", s.AdminKey, map[string]any{
				"workarea": tm.crew.ID, "name": "race", "audience": []string{tm.writer.KeyID}}).Status
		})
	}
	wg.Wait()
	created := 0
	for _, st := range statuses {
		switch st {
		case 201:
			created++
		case 409:
		default:
			t.Errorf("a concurrent simulation: %d", st)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM audit.simulations WHERE name = 'race'`); created != 1 || n != 1 {
		t.Fatalf("%d created, %d stored, want 1 and 1 (%v)", created, n, statuses)
	}
	// Concurrent quota settings: the last one stands, each journalled.
	for i := range 8 {
		wg.Go(func() { s.do(t, "PUT", "/v1/quotas", s.AdminKey, map[string]any{"writes_per_minute": 100 + i}) })
	}
	wg.Wait()
	if n := s.count(t, `SELECT count(*) FROM access.quotas WHERE tenant_id = $1`, s.TenantID); n != 1 {
		t.Fatalf("%d quota rows after concurrent settings", n)
	}
	// Web pages: a NUL in a sign-in code or a pasted key is refused in words.
	for _, path := range []string{"/sign-in/code?code=oml_c_%00", "/sign-in/code"} {
		r := s.do(t, "GET", path, "", nil)
		if r.Status != 401 || !strings.Contains(string(r.Body), "auth.invalid_key") {
			t.Errorf("GET %s: %d", path, r.Status)
		}
	}
	if r := s.do(t, "GET", "/healthz", "", nil); r.Status != 200 {
		t.Fatalf("the server stopped answering: %d", r.Status)
	}
}
