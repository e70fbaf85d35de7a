package domain_test

import (
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/platform/errs"
)

func TestCheckKinds(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in   []string
		want []string
	}{
		"empty":      {in: nil},
		"unknown":    {in: []string{"signal", "gossip"}},
		"families":   {in: []string{"signal", "answer"}, want: []string{"signal", "answer"}},
		"duplicates": {in: []string{"signal", "signal"}, want: []string{"signal"}},
	} {
		got, err := domain.CheckKinds(tc.in)
		if tc.want == nil {
			if errs.From(err).Code != errs.Validation {
				t.Errorf("%s: want request.validation, got %v", name, err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%s: %v %v", name, got, err)
		}
	}
}

func TestSubscriptionMatches(t *testing.T) {
	t.Parallel()
	me := domain.Me{KeyID: "key_me", Principal: "me"}
	sig := domain.Event{Type: "feed.signal", Actor: "key_b", Workarea: "wa_x", Payload: []byte(`{"principal":"bob"}`)}
	own := domain.Event{Type: "feed.signal", Actor: "key_me", Workarea: "wa_x", Payload: []byte(`{"principal":"me"}`)}
	for name, tc := range map[string]struct {
		sub    domain.Subscription
		e      domain.Event
		idPath string
		want   bool
	}{
		"kind":           {sub: domain.Subscription{Kinds: []string{"signal"}}, e: sig, idPath: "u.x", want: true},
		"other kind":     {sub: domain.Subscription{Kinds: []string{"idea"}}, e: sig, idPath: "u.x"},
		"session family": {sub: domain.Subscription{Kinds: []string{"session"}}, e: domain.Event{Type: "session.start"}, want: true},
		"in scope":       {sub: domain.Subscription{Kinds: []string{"signal"}, IDPath: "u"}, e: sig, idPath: "u.x", want: true},
		"out of scope":   {sub: domain.Subscription{Kinds: []string{"signal"}, IDPath: "u.y"}, e: sig, idPath: "u.x"},
		"prefix only":    {sub: domain.Subscription{Kinds: []string{"signal"}, IDPath: "u.x"}, e: sig, idPath: "u.xy"},
		"actor by name":  {sub: domain.Subscription{Kinds: []string{"signal"}, Actor: "bob"}, e: sig, want: true},
		"actor by key":   {sub: domain.Subscription{Kinds: []string{"signal"}, Actor: "key_b"}, e: sig, want: true},
		"another actor":  {sub: domain.Subscription{Kinds: []string{"signal"}, Actor: "carol"}, e: sig},
		"own kept":       {sub: domain.Subscription{Kinds: []string{"signal"}}, e: own, want: true},
		"own dropped":    {sub: domain.Subscription{Kinds: []string{"signal"}, DropOwn: true}, e: own},
		"other not drop": {sub: domain.Subscription{Kinds: []string{"signal"}, DropOwn: true}, e: sig, want: true},
	} {
		if got := tc.sub.Matches(tc.e, tc.idPath, me); got != tc.want {
			t.Errorf("%s: got %v", name, got)
		}
	}
}

func TestAttentionNotice(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	it := domain.Item{ID: "evt_q", Kind: domain.KindQuestion, WorkareaID: "wa_x", Body: "which?", Status: domain.Answered,
		ResolvedBy: "human", ResolutionBody: "the second", AnswerEventID: "evt_a", ResolvedAt: &at}
	p := domain.AttentionNotice(it)
	if p.Source != domain.SourceAttention || p.Kind != "answer" || p.ID != "evt_a" || p.Workarea != "wa_x" || !p.At.Equal(at) ||
		p.Title != "answer from human: the second" {
		t.Fatalf("%+v", p)
	}
	it.Kind, it.Status, it.Expired = domain.KindApproval, domain.Approved, true
	if p := domain.AttentionNotice(it); p.Title != "approval approved at its deadline: which?" {
		t.Fatalf("%+v", p)
	}
}
