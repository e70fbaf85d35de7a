// Package scope is the access vocabulary every context shares: the scopes
// a grant carries and the subtrees of workareas where a caller holds one.
// The access context decides them (D7: allow grants on a node and its
// ancestors, attenuated by deny grants, capped by the key's role); the
// other contexts receive them through their ports and ask only Contains.
package scope

import "strings"

// Scope is what a grant allows on a subtree.
type Scope string

// The scopes.
const (
	Reader         Scope = "reader"
	Writer         Scope = "writer"
	DreamerPropose Scope = "dreamer.propose"
	DreamerReview  Scope = "dreamer.review"
	Admin          Scope = "admin"
)

// Subtrees are where a caller holds one scope: inside an allowed id path
// and outside every denied one (deny wins). Paths are ltree id paths
// ("wa_a.wa_b"), which never move.
type Subtrees struct {
	Allow []string
	Deny  []string
}

// Contains reports whether the workarea at idPath lies in the subtrees.
func (t Subtrees) Contains(idPath string) bool {
	return under(idPath, t.Allow) && !under(idPath, t.Deny)
}

// Within narrows the subtrees to the one rooted at root: root itself when
// an allowed subtree holds it, else the allowed subtrees below root;
// nothing when a denied subtree holds root. Denies stay as they are.
func (t Subtrees) Within(root string) Subtrees {
	out := Subtrees{Deny: t.Deny}
	if under(root, t.Deny) {
		return out // denied there: nothing to narrow to
	}
	if under(root, t.Allow) {
		out.Allow = []string{root}
		return out
	}
	for _, a := range t.Allow {
		if under(a, []string{root}) {
			out.Allow = append(out.Allow, a)
		}
	}
	return out
}

// Empty reports whether the caller holds the scope nowhere.
func (t Subtrees) Empty() bool { return len(t.Allow) == 0 }

// under reports whether idPath is one of roots or lies below one.
func under(idPath string, roots []string) bool {
	for _, r := range roots {
		if idPath == r || strings.HasPrefix(idPath, r+".") {
			return true
		}
	}
	return false
}
