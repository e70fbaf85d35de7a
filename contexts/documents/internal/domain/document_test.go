package domain

import (
	"strings"
	"testing"

	"github.com/omlhub/oml/platform/errs"
)

func TestMetaAndVisibility(t *testing.T) {
	m := Meta{}
	if err := CheckMeta(Markdown, "intro\n\n## Plan for Q1\n", &m); err != nil || m.Title != "Plan for Q1" {
		t.Fatalf("first heading: %q %v", m.Title, err)
	}
	if err := CheckMeta(HTML, "<h1>x</h1>", &Meta{}); !errs.Is(err, errs.Validation) {
		t.Fatalf("an HTML document without a title: %v", err)
	}
	for _, bad := range []Meta{{Title: "a\nb"}, {Title: strings.Repeat("x", MaxTitle+1)}, {Title: "t", Label: strings.Repeat("x", MaxLabel+1)}} {
		if err := CheckMeta(HTML, "x", &bad); !errs.Is(err, errs.Validation) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	for _, c := range []struct{ v, p string }{{Public, "x"}, {Password, "short"}, {"secret", ""}, {Password, strings.Repeat("x", MaxPassword+1)}} {
		if err := CheckVisibility(c.v, c.p); !errs.Is(err, errs.Validation) {
			t.Errorf("%s %q: %v", c.v, c.p, err)
		}
	}
	if err := CheckContent(strings.Repeat("x", MaxContent+1)); !errs.Is(err, errs.LimitSize) {
		t.Fatalf("1 MiB + 1: %v", err)
	}
}

func TestPasswordAndTokens(t *testing.T) {
	salt, hash, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	d := Document{Visibility: Password, PasswordSalt: salt, PasswordHash: hash}
	if !d.PasswordMatches("correct horse") || d.PasswordMatches("wrong horse") || d.PasswordMatches("") {
		t.Fatal("password comparison")
	}
	token, th, err := NewDeleteToken()
	if err != nil {
		t.Fatal(err)
	}
	c := Comment{DeleteTokenHash: th}
	if !c.TokenMatches(token) || c.TokenMatches("") || c.TokenMatches(token+"x") {
		t.Fatal("token comparison")
	}
}

func TestCheckComment(t *testing.T) {
	content := "Accra first, then Tema."
	off := 5
	if err := CheckComment("why?", &off, "", content); err != nil {
		t.Fatal(err)
	}
	if err := CheckComment("why?", nil, "then Tema", content); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		body  string
		off   *int
		quote string
	}{{"", nil, ""}, {"x", &off, "Tema"}, {"x", nil, "Lagos"}, {strings.Repeat("x", MaxComment+1), nil, ""}}
	for _, b := range bad {
		if err := CheckComment(b.body, b.off, b.quote, content); !errs.Is(err, errs.Validation) {
			t.Errorf("%+v: %v", b, err)
		}
	}
	past := len(content) + 1
	if err := CheckComment("x", &past, "", content); !errs.Is(err, errs.Validation) {
		t.Fatal("an offset past the end")
	}
}
