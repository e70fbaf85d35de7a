// Package domain holds the lineage context's rules: edge kinds and labels,
// the edge lifecycle (pending → ratified | rejected) and the graph read's
// ceilings. It imports the standard library and platform/{errs,ids} only.
package domain

import (
	"regexp"
	"strings"
	"time"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
)

// Kind is what an edge connects.
type Kind string

// The edge kinds.
const (
	KindClaim    Kind = "claim"
	KindWorkarea Kind = "workarea"
)

// State is where an edge stands.
type State string

// The edge states.
const (
	Pending  State = "pending"
	Ratified State = "ratified"
	Rejected State = "rejected"
)

// WorkareaLabels is the closed label set of workarea edges.
var WorkareaLabels = []string{"relates_to", "continues", "derived_from", "mirrors"}

// The claim-edge label vocabulary is not fixed by the design; labels are
// short lowercase tokens.
var claimLabel = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// Edge is a proposed connection.
type Edge struct {
	ID                string
	TenantID          string
	Kind              Kind
	Label             string
	From, To          string
	FromIDPath        string
	ToIDPath          string
	Note              string
	State             State
	ProposerKeyID     string
	ProposerPrincipal string
	ProposedAt        time.Time
	DecidedAt         *time.Time
	LeasedUntil       *time.Time
}

// Proposal is a request to propose an edge.
type Proposal struct {
	Kind  Kind
	Label string
	From  string
	To    string
	Note  string
}

// Validate checks a proposal without storage.
func (p Proposal) Validate() error {
	switch p.Kind {
	case KindWorkarea:
		ok := false
		for _, l := range WorkareaLabels {
			ok = ok || l == p.Label
		}
		if !ok {
			return errs.Invalid("label %q: workarea edges are relates_to, continues, derived_from or mirrors", p.Label)
		}
	case KindClaim:
		if !claimLabel.MatchString(p.Label) {
			return errs.Invalid("label %q: want 1–32 of a-z, 0-9 and _, starting with a letter", p.Label)
		}
	default:
		return errs.Invalid("kind %q: want claim or workarea", p.Kind)
	}
	if p.From == "" || p.To == "" {
		return errs.Invalid("from and to are required")
	}
	if p.From == p.To {
		return errs.Invalid("an edge joins two different endpoints; from and to are both %s", p.From)
	}
	if len(p.Note) > 2000 {
		return errs.Invalid("note is longer than 2000 characters")
	}
	return nil
}

// Decide ratifies or rejects a pending edge.
func (e *Edge) Decide(approve bool, now time.Time) error {
	if e.State != Pending {
		return errs.New(errs.ServeConsumed, "an edge is decided once", "edge %s is already %s", e.ID, e.State)
	}
	e.State, e.DecidedAt, e.LeasedUntil = Rejected, &now, nil
	if approve {
		e.State = Ratified
	}
	return nil
}

// Graph read ceilings: a request above them is refused, never truncated
// silently.
const (
	MaxDepth     = 5
	DefaultDepth = 2
	MaxLimit     = 500
	DefaultLimit = 100
	MaxRoots     = 50
)

// Workareas returns the ids of the workareas of the edge's endpoints (the
// endpoints themselves for a workarea edge): an id path's last label is
// its workarea's id suffix.
func (e Edge) Workareas() (from, to string) {
	last := func(idPath string) string {
		return ids.WithSuffix(ids.Workarea, idPath[strings.LastIndexByte(idPath, '.')+1:])
	}
	return last(e.FromIDPath), last(e.ToIDPath)
}
