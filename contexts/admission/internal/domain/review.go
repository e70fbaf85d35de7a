package domain

import (
	"time"

	"github.com/omlhub/oml/platform/errs"
)

// ScanPolicy says what a workarea does with scan findings.
type ScanPolicy string

// The scan policies: flag shows findings to the reviewer; block refuses
// the submission.
const (
	ScanFlag  ScanPolicy = "flag"
	ScanBlock ScanPolicy = "block"
)

// Policy is the review policy in force at a workarea (inherited down the
// tree from the nearest ancestor that sets one).
type Policy struct {
	RequiredApprovals int
	HeldTTL           time.Duration
	Scan              ScanPolicy
	// SelfSignedDevelopment lets an author review its own item in a
	// development workarea, marked self_signed (a tenant switch).
	SelfSignedDevelopment bool
}

// DefaultPolicy applies where no ancestor sets one.
var DefaultPolicy = Policy{RequiredApprovals: 1, HeldTTL: 7 * 24 * time.Hour, Scan: ScanFlag}

// Validate checks a policy an admin sets.
func (p Policy) Validate() error {
	if p.RequiredApprovals < 1 || p.RequiredApprovals > 9 {
		return errs.Invalid("required_approvals must be 1–9, got %d", p.RequiredApprovals)
	}
	if p.HeldTTL < time.Second || p.HeldTTL > 365*24*time.Hour {
		return errs.Invalid("held_ttl_seconds must be between 1 and 31536000, got %d", int64(p.HeldTTL/time.Second))
	}
	if p.Scan != ScanFlag && p.Scan != ScanBlock {
		return errs.Invalid("scan policy %q: want flag or block", p.Scan)
	}
	return nil
}

// Reviewer is who asks to be served.
type Reviewer struct {
	KeyID     string
	Principal string
}

// Independence decides whether reviewer may review c (R2): never the
// author, never the author of anything in the item's lineage closure —
// unless the item sits in a development workarea under a policy that allows
// self-signed review, in which case the review is marked self-signed.
// closureAuthors are the principals who wrote the claims in the closure.
func Independence(c Claim, r Reviewer, closureAuthors []string, development bool, p Policy) (ok, selfSigned bool) {
	own := c.AuthorPrincipal == r.Principal
	for _, a := range closureAuthors {
		if a == r.Principal {
			own = true
		}
	}
	if !own {
		return true, false
	}
	if development && p.SelfSignedDevelopment {
		return true, true
	}
	return false, false
}

// Admissible decides whether reviewer r may judge c now, in a workarea of
// the given status: never in a validated (frozen) workarea (D8), and only
// when independent of the item and its lineage closure (R2, see
// [Independence]). It is asked when an item is served and again by the
// verdict, since grants, edges, status and settings may change between
// the two. selfSigned marks a development review the policy allows.
func Admissible(c Claim, r Reviewer, status string, closureAuthors []string, p Policy) (selfSigned bool, err error) {
	if status == "validated" {
		return false, errs.New(errs.Frozen, "status ladder: a validated workarea refuses new writes, verdicts included (D8)",
			"workarea %s is validated; its held items take no verdict", c.WorkareaID)
	}
	ok, self := Independence(c, r, closureAuthors, status == "development", p)
	if !ok {
		return false, errs.New(errs.NotIndependent, "R2: a reviewer is never the author of the item nor of anything in its lineage closure (derives_from and claim edges, computed at the verdict)",
			"this key's principal wrote artifact %s or something in its lineage closure", c.ID)
	}
	return self, nil
}

// Serve is one item — a held claim or a pending edge — leased to one
// reviewer until a verdict or expiry (D14).
type Serve struct {
	ID         string
	ArtifactID string // set for a claim
	EdgeID     string // set for an edge
	Reviewer   Reviewer
	SelfSigned bool
	ServedAt   time.Time
	ExpiresAt  time.Time
	ConsumedAt *time.Time
	Closure    []string
}

// Verdict is a reviewer's decision.
type Verdict string

// The verdicts.
const (
	Approve Verdict = "approve"
	Reject  Verdict = "reject"
)

// ParseVerdict reads a verdict.
func ParseVerdict(s string) (Verdict, error) {
	if s == string(Approve) || s == string(Reject) {
		return Verdict(s), nil
	}
	return "", errs.Invalid("verdict %q: want approve or reject", s)
}

// Consume marks the serve used by its first verdict at now. A second
// verdict is refused, and so is one after the lease ran out.
func (s *Serve) Consume(now time.Time) error {
	if s.ConsumedAt != nil {
		return errs.New(errs.ServeConsumed, "serve ceremony: the first verdict consumes the serve_id (D14)",
			"serve %s is consumed: it has its verdict or was released", s.ID)
	}
	if !now.Before(s.ExpiresAt) {
		return errs.New(errs.ServeExpired, "serve ceremony: a serve_id expires; ask for a new serve (D14)",
			"serve %s expired at %s", s.ID, s.ExpiresAt.UTC().Format(time.RFC3339))
	}
	s.ConsumedAt = &now
	return nil
}

// Decide applies an approving or rejecting verdict to a held claim. The
// last required approval promotes; one rejection rejects. An expired item
// never promotes (fail closed).
func (c *Claim) Decide(v Verdict, selfSigned bool, now time.Time) error {
	if c.State != StateHeld || c.Expired(now) {
		return errs.New(errs.ServeExpired, "held items expire and never promote (fail closed)",
			"artifact %s is no longer held", c.ID)
	}
	c.LeasedUntil = nil // the verdict ends the lease
	if v == Reject {
		c.State, c.SettledAt = StateRejected, &now
		return nil
	}
	c.Approvals++
	c.SelfSigned = c.SelfSigned || selfSigned
	if c.Approvals >= c.RequiredApprovals {
		c.State, c.SettledAt, c.PromotedAt = StatePromoted, &now, &now
	}
	return nil
}
