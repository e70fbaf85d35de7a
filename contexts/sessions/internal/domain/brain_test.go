package domain

import (
	"strings"
	"testing"

	"github.com/omlhub/oml/platform/errs"
)

func TestBrainChecks(t *testing.T) {
	t.Parallel()
	for path, ok := range map[string]bool{
		"/fs/RECOVERY.md": true, "/kv/a": true, "/fs/a/b/c.txt": true, "/fs/été.md": true,
		"/fs/": false, "/kv/": false, "/fs/a/": false, "/fs//a": false, "/fs/./a": false, "/fs/a/..": false,
		"/tmp/a": false, "fs/a": false, "/fs/a\x00b": false, "/fs/a\u202eb": false, "/fs/a\u200bb": false,
		"/fs/a\u2028b": false, "/fs/\xff": false, "/fs/" + strings.Repeat("a", 509): false,
	} {
		if err := CheckPath(path); (err == nil) != ok {
			t.Errorf("CheckPath(%q) = %v, want ok %v", path, err, ok)
		}
	}
	for prefix, ok := range map[string]bool{"": true, "/fs/": true, "/kv/a": true, "/x": false, "/fs/\x00": false, "/fs/\u202e": false} {
		if err := CheckPrefix(prefix); (err == nil) != ok {
			t.Errorf("CheckPrefix(%q) = %v, want ok %v", prefix, err, ok)
		}
	}
	if err := CheckPath("/tmp/" + strings.Repeat("x", 400)); err == nil || len(errs.From(err).Message) > 200 {
		t.Errorf("a long bad path is echoed whole: %v", err)
	}
	if err := CheckUsage(MaxBrainEntries, 10, true); !errs.Is(err, errs.LimitCeiling) {
		t.Errorf("entries: %v", err)
	}
	if err := CheckUsage(MaxBrainEntries, 10, false); err != nil {
		t.Errorf("an overwrite at the entry bound: %v", err)
	}
	if err := CheckUsage(1, MaxBrainBytes+1, false); !errs.Is(err, errs.LimitCeiling) {
		t.Errorf("bytes: %v", err)
	}
	for v, ok := range map[string]bool{"": true, "absent": true, VersionOf([]byte("x")): true, "sha256:ABC": false, "v1": false} {
		if err := CheckIfVersion(v); (err == nil) != ok {
			t.Errorf("CheckIfVersion(%q) = %v", v, err)
		}
	}
	if err := Matches(VersionOf([]byte("a")), VersionOf([]byte("b"))); !errs.Is(err, errs.SessionConflict) ||
		!strings.HasSuffix(errs.From(err).Message, "current_version="+VersionOf([]byte("b"))) {
		t.Errorf("Matches: %v", err)
	}
	if err := Matches(Absent, ""); err != nil {
		t.Errorf("absent where nothing is: %v", err)
	}
}
