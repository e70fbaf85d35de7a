package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/pgtest"
)

// PoliciesAt reads each path's nearest policy (the default where none is
// set) and the tenant's self-signed switch in one statement, for every
// path asked, and another tenant's policies and switch never.
func TestPoliciesAtReadsTheNearestPolicyAndTheSwitch(t *testing.T) {
	db := pgtest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := New(db)
	root := domain.Policy{RequiredApprovals: 2, HeldTTL: time.Hour, Scan: domain.ScanFlag}
	team := domain.Policy{RequiredApprovals: 3, HeldTTL: 2 * time.Hour, Scan: domain.ScanBlock}
	for _, set := range []struct {
		tenant, id, path string
		p                domain.Policy
	}{
		{"ten_a", "wa_0", "wa_0", root},
		{"ten_a", "wa_2", "wa_0.wa_1.wa_2", team},
		{"ten_b", "wa_9", "wa_9", domain.Policy{RequiredApprovals: 9, HeldTTL: time.Minute, Scan: domain.ScanBlock}},
	} {
		if err := r.PolicySet(ctx, set.tenant, set.id, set.path, set.p); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.SetSelfSignedDevelopment(ctx, "ten_b", true); err != nil {
		t.Fatal(err)
	}
	paths := []string{"wa_0.wa_1", "wa_0.wa_1.wa_2.wa_3", "wa_0.wa_1.wa_2", "wa_9"}
	for _, on := range []bool{false, true} {
		if on {
			if err := r.SetSelfSignedDevelopment(ctx, "ten_a", true); err != nil {
				t.Fatal(err)
			}
		}
		got, err := r.PoliciesAt(ctx, "ten_a", paths)
		if err != nil {
			t.Fatal(err)
		}
		withSwitch := func(p domain.Policy) domain.Policy { p.SelfSignedDevelopment = on; return p }
		want := map[string]domain.Policy{
			"wa_0.wa_1":           withSwitch(root),
			"wa_0.wa_1.wa_2.wa_3": withSwitch(team),
			"wa_0.wa_1.wa_2":      withSwitch(team),
			"wa_9":                withSwitch(domain.DefaultPolicy), // ten_b's path, not ten_a's
		}
		if len(got) != len(want) {
			t.Fatalf("switch %v: %d policies, want %d: %v", on, len(got), len(want), got)
		}
		for path, w := range want {
			if got[path] != w {
				t.Errorf("switch %v: %s: %+v, want %+v", on, path, got[path], w)
			}
		}
	}
	// A tenant with no row of settings or policies: the default, switch off.
	got, err := r.PoliciesAt(ctx, "ten_c", []string{"wa_0"})
	if err != nil || got["wa_0"] != domain.DefaultPolicy {
		t.Fatalf("a tenant with nothing set: %+v, %v", got, err)
	}
}
