package scope

import "testing"

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
