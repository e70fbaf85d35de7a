package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestSubmissionValidate(t *testing.T) {
	t.Parallel()
	ok := Submission{Verb: VerbRemember, Workarea: "wa", ClaimKey: "quote-1", Kind: KindMemory, Text: "hello"}
	cases := []struct {
		name string
		edit func(*Submission)
		code errs.Code
	}{
		{"valid", func(*Submission) {}, ""},
		{"no workarea", func(s *Submission) { s.Workarea = "" }, errs.Validation},
		{"bad claim key", func(s *Submission) { s.ClaimKey = "-x" }, errs.Validation},
		{"blank text", func(s *Submission) { s.Text = "  \n" }, errs.Validation},
		{"invalid utf-8", func(s *Submission) { s.Text = "\xff" }, errs.Validation},
		{"text over the limit", func(s *Submission) { s.Text = strings.Repeat("a", 101) }, errs.LimitSize},
		{"learn without lineage", func(s *Submission) { s.Verb = VerbLearn }, errs.LineageRequired},
		{"learn as steering", func(s *Submission) { s.Verb, s.DerivesFrom, s.Kind = VerbLearn, []string{"art_1"}, KindSteering }, errs.Validation},
		{"duplicate lineage", func(s *Submission) { s.DerivesFrom = []string{"a", "a"} }, errs.Validation},
		{"supersedes needs no key", func(s *Submission) { s.ClaimKey, s.Supersedes = "", "art_1" }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := ok
			c.edit(&s)
			err := s.Validate(100)
			if (c.code == "" && err != nil) || (c.code != "" && !errs.Is(err, c.code)) {
				t.Fatalf("Validate = %v, want %q", err, c.code)
			}
		})
	}
	learn := Submission{Verb: VerbLearn, Workarea: "wa", ClaimKey: "k", Text: "t", DerivesFrom: []string{"art_1"}}
	if err := learn.Validate(100); err != nil || learn.Kind != KindDerivedFact {
		t.Fatalf("learn defaults to derived_fact: %v %s", err, learn.Kind)
	}
}

func TestIndependence(t *testing.T) {
	t.Parallel()
	c := Claim{AuthorPrincipal: "alice"}
	self := Policy{SelfSignedDevelopment: true}
	cases := []struct {
		name           string
		reviewer       string
		closure        []string
		development    bool
		policy         Policy
		wantOK, wantSS bool
	}{
		{"independent", "bob", nil, false, DefaultPolicy, true, false},
		{"author", "alice", nil, false, DefaultPolicy, false, false},
		{"author of an ancestor", "bob", []string{"carol", "bob"}, false, DefaultPolicy, false, false},
		{"self-signed off in development", "alice", nil, true, DefaultPolicy, false, false},
		{"self-signed on, committed", "alice", nil, false, self, false, false},
		{"self-signed on, development", "alice", nil, true, self, true, true},
		{"ancestor author, self-signed development", "bob", []string{"bob"}, true, self, true, true},
	}
	for _, k := range cases {
		ok, ss := Independence(c, Reviewer{Principal: k.reviewer}, k.closure, k.development, k.policy)
		if ok != k.wantOK || ss != k.wantSS {
			t.Errorf("%s: ok=%v self=%v, want %v %v", k.name, ok, ss, k.wantOK, k.wantSS)
		}
	}
}

func TestServeConsume(t *testing.T) {
	t.Parallel()
	s := Serve{ID: "srv_1", ExpiresAt: t0.Add(time.Minute)}
	if err := s.Consume(t0.Add(time.Minute)); !errs.Is(err, errs.ServeExpired) {
		t.Fatalf("at expiry: %v", err)
	}
	if err := s.Consume(t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(t0); !errs.Is(err, errs.ServeConsumed) {
		t.Fatalf("second verdict: %v", err)
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	held := Claim{ID: "art_1", State: StateHeld, RequiredApprovals: 2, HeldExpiresAt: t0.Add(time.Hour)}

	c := held
	if err := c.Decide(Approve, false, t0); err != nil || c.State != StateHeld || c.Approvals != 1 {
		t.Fatalf("first of two approvals: %v %+v", err, c)
	}
	if err := c.Decide(Approve, true, t0); err != nil || c.State != StatePromoted || c.PromotedAt == nil || !c.SelfSigned {
		t.Fatalf("last approval: %v %+v", err, c)
	}
	c = held
	if err := c.Decide(Reject, false, t0); err != nil || c.State != StateRejected || c.PromotedAt != nil {
		t.Fatalf("reject: %v %+v", err, c)
	}
	c = held
	if err := c.Decide(Approve, false, t0.Add(time.Hour)); err == nil || c.State != StateHeld {
		t.Fatal("an expired item was approved")
	}
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultPolicy.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Policy{
		{RequiredApprovals: 0, HeldTTL: time.Hour, Scan: ScanFlag},
		{RequiredApprovals: 1, HeldTTL: 0, Scan: ScanFlag},
		{RequiredApprovals: 1, HeldTTL: time.Hour, Scan: "maybe"},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("accepted %+v", p)
		}
	}
}

func TestAdmissible(t *testing.T) {
	t.Parallel()
	item := Claim{ID: "art_1", WorkareaID: "wa_1", AuthorPrincipal: "alice"}
	selfOK := DefaultPolicy
	selfOK.SelfSignedDevelopment = true
	cases := []struct {
		name     string
		reviewer string
		status   string
		authors  []string
		policy   Policy
		self     bool
		code     errs.Code
	}{
		{"independent", "bob", "committed", []string{"carol"}, DefaultPolicy, false, ""},
		{"author", "alice", "committed", nil, DefaultPolicy, false, errs.NotIndependent},
		{"ancestor's author", "bob", "committed", []string{"carol", "bob"}, DefaultPolicy, false, errs.NotIndependent},
		{"frozen", "bob", "validated", nil, DefaultPolicy, false, errs.Frozen},
		{"self-signed in development", "alice", "development", nil, selfOK, true, ""},
		{"self-signed off", "alice", "development", nil, DefaultPolicy, false, errs.NotIndependent},
		{"self-signed only in development", "alice", "committed", nil, selfOK, false, errs.NotIndependent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			self, err := Admissible(item, Reviewer{KeyID: "key_r", Principal: c.reviewer}, c.status, c.authors, c.policy)
			if (c.code == "" && err != nil) || (c.code != "" && !errs.Is(err, c.code)) || self != c.self {
				t.Fatalf("Admissible = %v, %v; want %v, %q", self, err, c.self, c.code)
			}
		})
	}
}
