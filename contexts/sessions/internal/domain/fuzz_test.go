package domain

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckPath: an accepted brain path is bounded UTF-8 under /fs/ or
// /kv/, with no NUL, no trailing slash and no empty, "." or ".." segment;
// never a panic.
func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"/fs/a.md", "/kv/k", "/kv/", "/fs/a/", "/fs//a", "/kv/../x", "/fs/a\x00", "/fs/\xff", "/x/a",
		"/kv/" + strings.Repeat("é", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		_ = CheckPrefix(path)
		_ = CheckIfVersion(path)
		_ = CheckName(path)
		_ = CheckNote(path)
		if CheckPath(path) != nil {
			return
		}
		if len(path) > MaxBrainPath || !utf8.ValidString(path) || strings.ContainsRune(path, 0) || strings.HasSuffix(path, "/") ||
			!strings.HasPrefix(path, NamespaceFS) && !strings.HasPrefix(path, NamespaceKV) {
			t.Fatalf("accepted %q", path)
		}
		for _, seg := range strings.Split(path[len(NamespaceFS):], "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted %q with segment %q", path, seg)
			}
		}
	})
}
