package domain

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckPath: an accepted page path is bounded UTF-8 under /fs/ with no
// NUL and no empty, "." or ".." segment; never a panic.
func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"/fs/a.md", "/fs/", "/fs//a", "/fs/./a", "/fs/a/..", "/kv/a", "/fs/a\x00", "/fs/\u202e.md", "/fs/\xff",
		"/fs/" + strings.Repeat("a", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		_ = CheckPrefix(path)
		_ = CheckIfVersion(path)
		if CheckPath(path) != nil {
			return
		}
		if len(path) > MaxPath || !utf8.ValidString(path) || !strings.HasPrefix(path, Namespace) || strings.ContainsRune(path, 0) {
			t.Fatalf("accepted %q", path)
		}
		for _, seg := range strings.Split(path[len(Namespace):], "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted %q with segment %q", path, seg)
			}
		}
	})
}
