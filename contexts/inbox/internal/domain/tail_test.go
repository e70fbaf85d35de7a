package domain

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/errs"
)

func TestVisible(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		e       Event
		inScope bool
		want    bool
	}{
		{"a promotion in scope", Event{Type: "lifecycle.promote", Actor: "key_rev", Workarea: "wa_1"}, true, true},
		{"a promotion out of scope", Event{Type: "lifecycle.promote", Actor: "key_rev", Workarea: "wa_1"}, false, false},
		{"another writer's submission (R3)", Event{Type: "submission.remember", Actor: "key_other", Workarea: "wa_1"}, true, false},
		{"my own submission", Event{Type: "submission.remember", Actor: "key_me", Workarea: "wa_1"}, true, true},
		{"another's serve", Event{Type: "review.serve", Actor: "key_rev", Workarea: "wa_1"}, true, false},
		{"a rejection", Event{Type: "lifecycle.reject", Actor: "key_rev", Workarea: "wa_1"}, true, false},
		{"an erased promoted claim", Event{Type: "lifecycle.erase", Actor: "key_adm", Workarea: "wa_1", Payload: []byte(`{"was_promoted":true}`)}, true, true},
		{"an erased held claim", Event{Type: "lifecycle.erase", Actor: "key_adm", Workarea: "wa_1", Payload: []byte(`{"was_promoted":false}`)}, true, false},
		{"a grant", Event{Type: "grant.add", Actor: "key_adm", Workarea: "wa_1"}, true, false},
		{"another agent's session ended", Event{Type: "session.end", Actor: "key_other", Workarea: "wa_1"}, true, true},
		{"no workarea, mine", Event{Type: "key.issue", Actor: "key_me"}, true, false},
		{"a promotion in my simulation", Event{Type: "lifecycle.promote", Actor: "key_rev", Workarea: "wa_1", Simulation: "sim_mine"}, true, true},
		{"a promotion in another simulation (D10)", Event{Type: "lifecycle.promote", Actor: "key_rev", Workarea: "wa_1", Simulation: "sim_other"}, true, false},
		{"my own submission in another simulation (D10)", Event{Type: "submission.remember", Actor: "key_me", Workarea: "wa_1", Simulation: "sim_other"}, true, false},
	} {
		if got := Visible(c.e, "key_me", c.inScope, []string{"sim_mine"}); got != c.want {
			t.Errorf("%s: Visible = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTailQueryValidate(t *testing.T) {
	t.Parallel()
	neg := int64(-1)
	for _, c := range []struct {
		name string
		q    TailQuery
		code errs.Code
	}{
		{"defaults", TailQuery{Scope: "u"}, ""},
		{"no scope", TailQuery{}, errs.Validation},
		{"negative after_seq", TailQuery{Scope: "u", AfterSeq: &neg}, errs.Validation},
		{"limit over the ceiling", TailQuery{Scope: "u", Limit: MaxLimit + 1}, errs.LimitCeiling},
		{"negative limit", TailQuery{Scope: "u", Limit: -1}, errs.LimitCeiling},
	} {
		err := c.q.Validate()
		if (c.code == "" && err != nil) || (c.code != "" && !errs.Is(err, c.code)) {
			t.Errorf("%s: Validate = %v, want %q", c.name, err, c.code)
		}
		if c.code == "" && c.q.Limit != DefaultLimit {
			t.Errorf("%s: limit %d", c.name, c.q.Limit)
		}
	}
}

func TestRankEvents(t *testing.T) {
	t.Parallel()
	events := []BriefEvent{
		{Seq: 1, Own: true}, {Seq: 2}, {Seq: 3, Open: true}, {Seq: 4, Own: true}, {Seq: 5}, {Seq: 6, Open: true, Own: true},
	}
	got, more := RankEvents(events)
	var order []int64
	for _, e := range got {
		order = append(order, e.Seq)
	}
	if want := []int64{6, 3, 5, 2, 4, 1}; !slices.Equal(order, want) || more != 0 {
		t.Fatalf("order %v (more %d), want %v", order, more, want)
	}
	var many []BriefEvent
	for i := range 30 {
		many = append(many, BriefEvent{Seq: int64(i + 1)})
	}
	if got, more := RankEvents(many); len(got) != BriefEvents || more != 10 || got[0].Seq != 30 {
		t.Fatalf("30 events: %d shown, %d more, first %d", len(got), more, got[0].Seq)
	}
	if s, cut := Cut(strings.Repeat("é", BriefText+1)); !cut || utf8.RuneCountInString(s) != BriefText {
		t.Fatalf("Cut: %d runes, cut %v", utf8.RuneCountInString(s), cut)
	}
}
