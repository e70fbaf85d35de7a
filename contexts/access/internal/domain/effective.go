package domain

import "strings"

// GrantAt is a live grant with the id path of the node it is bound to.
type GrantAt struct {
	ID         string
	WorkareaID string
	IDPath     string
	Scope      Scope
	Effect     Effect
}

// IsAncestorOrSelf reports whether the node at path a is b or one of b's
// ancestors. Paths are ltree-style dotted labels.
func IsAncestorOrSelf(a, b string) bool {
	return a == b || strings.HasPrefix(b, a+".")
}

// Effective is a key's access at the node with id path node (D7): the
// union of allow grants on the node and its ancestors, minus the deny
// grants on the node and its ancestors (deny wins), capped by the role.
// A revoked key has no access anywhere.
func Effective(role Role, revoked bool, grants []GrantAt, node string) Scope {
	if revoked {
		return 0
	}
	var allow, deny Scope
	for _, g := range grants {
		if !IsAncestorOrSelf(g.IDPath, node) {
			continue
		}
		if g.Effect == Deny {
			deny |= g.Scope
		} else {
			allow |= g.Scope
		}
	}
	return allow &^ deny & role.Ceiling()
}

// Verbs are the operations a key may use at a node, as oml_workarea_info
// reports them in my_effective_verbs.
func Verbs(s Scope, status Status, isRoot bool) []string {
	var v []string
	if s.Has(ScopeReader) {
		v = append(v, "recall", "read", "graph_read")
	}
	// Frozen nodes and universe itself refuse content writes (D8).
	writable := status != StatusValidated && !isRoot
	if s.Has(ScopeWriter) && writable {
		v = append(v, "remember", "learn", "attach")
	}
	if s.Has(ScopeDreamerPropose) && status != StatusValidated {
		v = append(v, "relate_propose")
	}
	if s.Has(ScopeDreamerReview) && status != StatusValidated {
		v = append(v, "review")
	}
	if s.Has(ScopeAdmin) {
		v = append(v, "admin")
	}
	if v == nil {
		v = []string{}
	}
	return v
}
