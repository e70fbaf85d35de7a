package scope

import (
	"slices"
	"testing"
)

func TestContains(t *testing.T) {
	t.Parallel()
	s := Subtrees{Allow: []string{"u.p", "u.x"}, Deny: []string{"u.p.secret"}}
	for path, want := range map[string]bool{
		"u.p": true, "u.p.crew": true, "u.x": true,
		"u": false, "u.pp": false, "u.p.secret": false, "u.p.secret.deep": false, "u.p.secretive": true, "": false,
	} {
		if got := s.Contains(path); got != want {
			t.Errorf("Contains(%q) = %v, want %v", path, got, want)
		}
	}
	if !(Subtrees{}).Empty() || s.Empty() {
		t.Error("Empty")
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	s := Subtrees{Allow: []string{"u.a", "u.b.x", "u.b.y"}, Deny: []string{"u.a.d"}}
	for _, c := range []struct {
		root string
		want []string
	}{
		{"u.a", []string{"u.a"}},
		{"u.a.c", []string{"u.a.c"}},
		{"u.b", []string{"u.b.x", "u.b.y"}},
		{"u.c", nil},
		{"u", []string{"u.a", "u.b.x", "u.b.y"}},
		{"u.a.d", nil},
		{"u.a.d.e", nil},
	} {
		got := s.Within(c.root)
		if !slices.Equal(got.Allow, c.want) || !slices.Equal(got.Deny, s.Deny) {
			t.Errorf("Within(%q) = %+v, want allow %v", c.root, got, c.want)
		}
	}
	if !s.Within("u.a").Contains("u.a.c") || s.Within("u.a").Contains("u.a.d.e") || s.Within("u.a").Contains("u.b.x") {
		t.Error("narrowed subtrees contain the wrong workareas")
	}
}
