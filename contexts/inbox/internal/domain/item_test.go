package domain_test

import (
	"strings"
	"testing"

	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/platform/errs"
)

func TestCheckOptions(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		in []string
		ok bool
	}{
		"none":          {nil, true},
		"two, trimmed":  {[]string{" a ", "b"}, true},
		"six":           {[]string{"a", "b", "c", "d", "e", "f"}, true},
		"one":           {[]string{"a"}, false},
		"seven":         {[]string{"a", "b", "c", "d", "e", "f", "g"}, false},
		"80 characters": {[]string{strings.Repeat("é", 80), "b"}, true},
		"81 characters": {[]string{strings.Repeat("x", 81), "b"}, false},
		"blank":         {[]string{"  ", "b"}, false},
		"two lines":     {[]string{"a\nb", "c"}, false},
		"duplicate":     {[]string{"a", " a"}, false},
	} {
		_, err := domain.CheckOptions(c.in)
		if (err == nil) != c.ok || (err != nil && !errs.Is(err, errs.Validation)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNewDeadline(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	for name, c := range map[string]struct {
		kind     domain.Kind
		in       *int64
		onExpiry string
		want     string // on_expiry kept, or "!" for a refusal
	}{
		"none":                     {domain.KindQuestion, nil, "", ""},
		"59 s":                     {domain.KindQuestion, n(59), "", "!"},
		"60 s":                     {domain.KindQuestion, n(60), "", ""},
		"30 days":                  {domain.KindApproval, n(2_592_000), "approve", "approve"},
		"30 days and a second":     {domain.KindApproval, n(2_592_001), "", "!"},
		"approval declines":        {domain.KindApproval, n(60), "", "decline"},
		"on_expiry on a question":  {domain.KindQuestion, n(60), "approve", "!"},
		"unknown outcome":          {domain.KindApproval, n(60), "maybe", "!"},
		"outcome without deadline": {domain.KindApproval, nil, "approve", "!"},
		"deadline on a signal":     {"", n(60), "", "!"},
	} {
		d, err := domain.NewDeadline(c.kind, c.in, c.onExpiry)
		if c.want == "!" {
			if !errs.Is(err, errs.Validation) {
				t.Errorf("%s: want a refusal, got %v", name, err)
			}
			continue
		}
		if err != nil || d.OnExpiry != c.want {
			t.Errorf("%s: %+v %v", name, d, err)
		}
	}
}

func TestItemShownTo(t *testing.T) {
	t.Parallel()
	q, enrol := domain.Item{Kind: domain.KindQuestion}, domain.Item{Kind: domain.KindEnrolRequest}
	if !q.ShownTo(true, false) || q.ShownTo(false, true) || enrol.ShownTo(true, false) || !enrol.ShownTo(true, true) {
		t.Fatal("ShownTo: a reader sees questions, only an admin sees enrolment requests, nobody else sees either")
	}
	if !domain.WorkingState("brain.put") || domain.WorkingState("feed.signal") || domain.WorkingState("session.start") {
		t.Fatal("WorkingState")
	}
}
