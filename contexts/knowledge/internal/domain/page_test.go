package domain

import (
	"strings"
	"testing"

	"github.com/omlhub/oml/platform/errs"
)

func TestCheckPath(t *testing.T) {
	for _, ok := range []string{"/fs/a", "/fs/design/plan ü.md", "/fs/" + strings.Repeat("x", MaxPath-4)} {
		if err := CheckPath(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/kv/a", "/fs/", "/fs/a/", "/fs//a", "/fs/./a", "/fs/../a", "/fs/a\x00", "/fs/a\u202e",
		"/fs/a\u2028b", "/fs/\xff", "/fs/" + strings.Repeat("x", MaxPath-3)} {
		if err := CheckPath(bad); !errs.Is(err, errs.Validation) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestCheckContentAndVersion(t *testing.T) {
	if err := CheckContent(strings.Repeat("x", MaxPage)); err != nil {
		t.Fatal(err)
	}
	if err := CheckContent(strings.Repeat("x", MaxPage+1)); !errs.Is(err, errs.LimitSize) {
		t.Fatalf("1 MiB + 1: %v", err)
	}
	if err := CheckContent(""); !errs.Is(err, errs.Validation) {
		t.Fatalf("empty: %v", err)
	}
	for _, ok := range []string{"", Absent, "sha256:" + strings.Repeat("a", 64)} {
		if err := CheckIfVersion(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"v1", "sha256:" + strings.Repeat("A", 64), "sha256:" + strings.Repeat("a", 63), "sha512:" + strings.Repeat("a", 64)} {
		if err := CheckIfVersion(bad); !errs.Is(err, errs.Validation) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
