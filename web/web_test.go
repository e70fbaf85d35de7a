package web

import (
	"strings"
	"testing"
)

// Every page template parses with the layout, and every page the
// handlers render exists.
func TestTemplatesParse(t *testing.T) {
	p, err := New(Deps{PublicURL: "http://127.0.0.1:8080"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"signin", "code", "refusal", "queue", "empty", "item", "result", "inbox", "overview", "workarea"} {
		if p.pages[name] == nil {
			t.Errorf("no page %q", name)
		}
	}
	if p.secure || p.cookie != "oml_session" {
		t.Fatalf("http: secure %v cookie %q", p.secure, p.cookie)
	}
	s, err := New(Deps{PublicURL: "https://oml.example"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.secure || s.cookie != "__Host-oml_session" || !s.origins["https://oml.example"] {
		t.Fatalf("https: secure %v cookie %q origins %v", s.secure, s.cookie, s.origins)
	}
}

// A redirect target stays on this site.
func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/queue": "/queue", "/inbox?x=1": "/inbox?x=1", "": "", "//evil.example/": "", "https://evil.example": "",
		"/\\evil.example": "", "queue": "", "/a\r\nLocation: x": "",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// The CSRF token is the session's, and reveals nothing of it.
func TestCSRFToken(t *testing.T) {
	a, b := csrfToken("oml_w_AAAA"), csrfToken("oml_w_AAAB")
	if a == b || a != csrfToken("oml_w_AAAA") || strings.Contains(a, "AAAA") || len(a) != 43 {
		t.Fatalf("tokens %q %q", a, b)
	}
}

// A skip list keeps the newest 100 ids and drops blanks.
func TestSkipList(t *testing.T) {
	if got := skipList(" a, ,b,"); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("skipList = %v", got)
	}
	long := strings.Repeat("x,", 150) + "last"
	if got := skipList(long); len(got) != maxSkip || got[len(got)-1] != "last" {
		t.Fatalf("skipList kept %d, last %q", len(got), got[len(got)-1])
	}
}
