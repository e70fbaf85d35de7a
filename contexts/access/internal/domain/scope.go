// Package domain holds the access context's rules: roles and their
// ceilings, grant scopes, effective access over the workarea tree (D7), the
// verbs a key may use at a node, the workarea status ladder (D8) and key
// tokens. It imports the standard library and platform/{errs,ids} only.
package domain

import "strings"

// Scope is what a grant carries over a subtree.
type Scope uint8

// The grant scopes.
const (
	ScopeReader Scope = 1 << iota
	ScopeWriter
	ScopeDreamerPropose
	ScopeDreamerReview
	ScopeAdmin
)

var scopeNames = []struct {
	s    Scope
	name string
}{
	{ScopeReader, "reader"},
	{ScopeWriter, "writer"},
	{ScopeDreamerPropose, "dreamer.propose"},
	{ScopeDreamerReview, "dreamer.review"},
	{ScopeAdmin, "admin"},
}

// ParseScope reads one scope's wire name.
func ParseScope(s string) (Scope, bool) {
	for _, n := range scopeNames {
		if n.name == s {
			return n.s, true
		}
	}
	return 0, false
}

// Has reports whether all of want are in s.
func (s Scope) Has(want Scope) bool { return s&want == want && want != 0 }

// Names lists the scopes in s.
func (s Scope) Names() []string {
	var out []string
	for _, n := range scopeNames {
		if s&n.s != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

func (s Scope) String() string { return strings.Join(s.Names(), ",") }

// Role is a key's role; it caps what grants can give it.
type Role string

// The roles.
const (
	RoleReader   Role = "reader"
	RoleWriter   Role = "writer"
	RoleDreamer  Role = "dreamer"
	RoleAdmin    Role = "admin"
	RoleOperator Role = "operator"
)

var roleCeilings = map[Role]Scope{
	RoleReader:  ScopeReader,
	RoleWriter:  ScopeReader | ScopeWriter,
	RoleDreamer: ScopeReader | ScopeWriter | ScopeDreamerPropose | ScopeDreamerReview,
	RoleAdmin:   ScopeReader | ScopeWriter | ScopeDreamerPropose | ScopeDreamerReview | ScopeAdmin,
	// The operator runs the deployment and administers the tenant — keys,
	// workareas, grants, bans, sessions' owners — but never reads, writes
	// or reviews content (D9): its grants give it admin scope and nothing
	// else, and every content verb refuses it by its role.
	RoleOperator: ScopeAdmin,
}

// ParseRole reads a role's wire name.
func ParseRole(s string) (Role, bool) {
	_, ok := roleCeilings[Role(s)]
	return Role(s), ok
}

// Ceiling is the most a role can hold, whatever it is granted.
func (r Role) Ceiling() Scope { return roleCeilings[r] }

// Effect is allow or deny.
type Effect string

// The grant effects.
const (
	Allow Effect = "allow"
	Deny  Effect = "deny"
)

// ParseEffect reads an effect's wire name.
func ParseEffect(s string) (Effect, bool) {
	return Effect(s), s == string(Allow) || s == string(Deny)
}
