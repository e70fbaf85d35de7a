package domain

import (
	"slices"
	"testing"
)

// The tree used below: universe (U) › procurement (P) › metals-crew (M),
// and a sibling of P, finance (F).
const (
	pathU = "U"
	pathP = "U.P"
	pathM = "U.P.M"
	pathF = "U.F"
)

func g(path string, s Scope, e Effect) GrantAt { return GrantAt{IDPath: path, Scope: s, Effect: e} }

func TestEffective(t *testing.T) {
	t.Parallel()
	rw := ScopeReader | ScopeWriter
	cases := []struct {
		name    string
		role    Role
		revoked bool
		grants  []GrantAt
		node    string
		want    Scope
	}{
		{"no grants, nothing", RoleAdmin, false, nil, pathM, 0},
		{"allow on the node", RoleWriter, false, []GrantAt{g(pathM, rw, Allow)}, pathM, rw},
		{"allow on an ancestor reaches down", RoleWriter, false, []GrantAt{g(pathU, rw, Allow)}, pathM, rw},
		{"allow on a descendant does not reach up", RoleWriter, false, []GrantAt{g(pathM, rw, Allow)}, pathP, 0},
		{"allow on a sibling does not apply", RoleWriter, false, []GrantAt{g(pathF, rw, Allow)}, pathM, 0},
		{"label prefix is not ancestry", RoleWriter, false, []GrantAt{g("U.P", rw, Allow)}, "U.PX", 0},
		{"union of allows", RoleWriter, false, []GrantAt{g(pathU, ScopeReader, Allow), g(pathP, ScopeWriter, Allow)}, pathM, rw},
		{"deny on the node wins over ancestor allow", RoleWriter, false, []GrantAt{g(pathU, rw, Allow), g(pathM, ScopeWriter, Deny)}, pathM, ScopeReader},
		{"deny on an ancestor wins over node allow", RoleWriter, false, []GrantAt{g(pathM, rw, Allow), g(pathP, ScopeReader, Deny)}, pathM, ScopeWriter},
		{"deny on a descendant leaves the node", RoleWriter, false, []GrantAt{g(pathU, rw, Allow), g(pathM, rw, Deny)}, pathP, rw},
		{"deny on a descendant carves its subtree", RoleWriter, false, []GrantAt{g(pathU, rw, Allow), g(pathP, rw, Deny)}, pathM, 0},
		{"deny without allow is nothing", RoleAdmin, false, []GrantAt{g(pathU, ScopeAdmin, Deny)}, pathM, 0},
		{"reader role caps writer grant", RoleReader, false, []GrantAt{g(pathU, rw, Allow)}, pathM, ScopeReader},
		{"writer role caps admin and review", RoleWriter, false, []GrantAt{g(pathU, ScopeAdmin|ScopeDreamerReview|ScopeReader, Allow)}, pathM, ScopeReader},
		{"dreamer holds review and propose", RoleDreamer, false, []GrantAt{g(pathU, ScopeDreamerReview|ScopeDreamerPropose|ScopeAdmin, Allow)}, pathM, ScopeDreamerReview | ScopeDreamerPropose},
		{"admin holds everything granted", RoleAdmin, false, []GrantAt{g(pathU, ScopeAdmin|rw, Allow)}, pathM, ScopeAdmin | rw},
		{"operator holds admin scope only", RoleOperator, false, []GrantAt{g(pathU, ScopeAdmin|rw, Allow)}, pathM, ScopeAdmin},
		{"revoked key holds nothing", RoleAdmin, true, []GrantAt{g(pathU, ScopeAdmin|rw, Allow)}, pathM, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Effective(c.role, c.revoked, c.grants, c.node); got != c.want {
				t.Fatalf("Effective = %v, want %v", got, c.want)
			}
		})
	}
}

func TestVerbs(t *testing.T) {
	t.Parallel()
	all := ScopeReader | ScopeWriter | ScopeDreamerPropose | ScopeDreamerReview | ScopeAdmin
	cases := []struct {
		name   string
		scope  Scope
		status Status
		root   bool
		want   []string
	}{
		{"reader", ScopeReader, StatusCommitted, false, []string{"recall", "read", "graph_read"}},
		{"writer+reader", ScopeReader | ScopeWriter, StatusDevelopment, false, []string{"recall", "read", "graph_read", "remember", "learn", "attach"}},
		{"writer without reader cannot recall", ScopeWriter, StatusCommitted, false, []string{"remember", "learn", "attach"}},
		{"frozen node refuses writes, proposals and reviews", all, StatusValidated, false, []string{"recall", "read", "graph_read", "admin"}},
		{"universe refuses direct writes", all, StatusCommitted, true, []string{"recall", "read", "graph_read", "relate_propose", "review", "admin"}},
		{"nothing", 0, StatusCommitted, false, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Verbs(c.scope, c.status, c.root); !slices.Equal(got, c.want) {
				t.Fatalf("Verbs = %v, want %v", got, c.want)
			}
		})
	}
}

func TestStatusLadder(t *testing.T) {
	t.Parallel()
	w := Workarea{ID: "wa_x", Status: StatusDevelopment}
	if err := w.SetStatus(StatusCommitted, w.UpdatedAt); err != nil {
		t.Fatal(err)
	}
	if err := w.SetStatus(StatusDevelopment, w.UpdatedAt); err == nil {
		t.Fatal("moved down the ladder")
	}
	if err := w.SetStatus(StatusValidated, w.UpdatedAt); err != nil {
		t.Fatal(err)
	}
	if err := w.SetStatus(StatusCommitted, w.UpdatedAt); err == nil {
		t.Fatal("a validated workarea changed status")
	}
	if err := w.SetCrew(&Crew{Name: "c"}, w.UpdatedAt); err != nil {
		t.Fatalf("crew update on a frozen node: %v", err)
	}
	if _, err := NewChild(w, "child", "", nil, w.UpdatedAt); err == nil {
		t.Fatal("a frozen node took a child")
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	tok, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	sel, ver, ok := ParseToken(tok.Plain)
	if !ok || string(sel) != string(tok.Selector) || !VerifierMatches(tok.Verifier, ver) {
		t.Fatalf("round trip failed for %s", tok.Plain)
	}
	tampered := tok.Plain[:len(tok.Plain)-1] + map[bool]string{true: "0", false: "1"}[tok.Plain[len(tok.Plain)-1] != '0']
	if _, ver2, ok := ParseToken(tampered); ok && VerifierMatches(tok.Verifier, ver2) {
		t.Fatal("a tampered token verified")
	}
	for _, bad := range []string{"", "oml_k_", "oml_k_short", "Bearer x", tok.Plain + "X"} {
		if _, _, ok := ParseToken(bad); ok {
			t.Errorf("ParseToken(%q) accepted", bad)
		}
	}
}
