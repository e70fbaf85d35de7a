package domain

import (
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
)

// RootName is the name of every tenant's root workarea.
const RootName = "universe"

// Status is a workarea's rung on the ladder (D8).
type Status string

// The status ladder, in order.
const (
	StatusDevelopment Status = "development"
	StatusCommitted   Status = "committed"
	StatusValidated   Status = "validated"
)

var ladder = map[Status]int{StatusDevelopment: 0, StatusCommitted: 1, StatusValidated: 2}

// ParseStatus reads a status's wire name.
func ParseStatus(s string) (Status, bool) {
	_, ok := ladder[Status(s)]
	return Status(s), ok
}

// Crew is the crew record of a workarea: recorded and journalled, not
// operated — the crew is managed elsewhere.
type Crew struct {
	Name            string
	CharterURI      string
	ExternalManager string
}

// Workarea is a node of the tenant's tree.
type Workarea struct {
	ID        string
	ParentID  string // "" for universe
	Name      string
	Path      string // "universe.procurement.metals-crew"
	IDPath    string // ltree of id suffixes
	Status    Status
	Crew      *Crew
	CreatedAt time.Time
	UpdatedAt time.Time
}

// IsRoot reports whether w is universe.
func (w Workarea) IsRoot() bool { return w.ParentID == "" }

var leafName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// NewRoot returns a tenant's universe.
func NewRoot(now time.Time) Workarea {
	id := ids.New(ids.Workarea)
	return Workarea{
		ID: id, Name: RootName, Path: RootName, IDPath: ids.Suffix(id),
		Status: StatusCommitted, CreatedAt: now, UpdatedAt: now,
	}
}

// NewChild validates and returns a child of parent. A frozen parent takes
// no new children.
func NewChild(parent Workarea, name string, status Status, crew *Crew, now time.Time) (Workarea, error) {
	if !leafName.MatchString(name) {
		return Workarea{}, errs.Invalid("name %q: want 1–63 characters of a-z, 0-9, '_' or '-', starting with a letter or digit", name)
	}
	if parent.Status == StatusValidated {
		return Workarea{}, FrozenError(parent.ID)
	}
	if status == "" {
		status = StatusDevelopment
	}
	if err := crew.validate(); err != nil {
		return Workarea{}, err
	}
	id := ids.New(ids.Workarea)
	return Workarea{
		ID: id, ParentID: parent.ID, Name: name,
		Path: parent.Path + "." + name, IDPath: parent.IDPath + "." + ids.Suffix(id),
		Status: status, Crew: crew, CreatedAt: now, UpdatedAt: now,
	}, nil
}

// SetStatus moves w up the ladder. A validated workarea is frozen: its
// status no longer changes; moving down is refused.
func (w *Workarea) SetStatus(s Status, now time.Time) error {
	if s == w.Status {
		return nil
	}
	if w.Status == StatusValidated {
		return FrozenError(w.ID)
	}
	if ladder[s] < ladder[w.Status] {
		return errs.New(errs.StatusLadder, "status ladder: development → committed → validated, upward only (D8)",
			"workarea %s is %s; it cannot move back to %s", w.ID, w.Status, s)
	}
	w.Status, w.UpdatedAt = s, now
	return nil
}

// SetCrew replaces the crew record; allowed even when frozen (D8).
func (w *Workarea) SetCrew(c *Crew, now time.Time) error {
	if err := c.validate(); err != nil {
		return err
	}
	w.Crew, w.UpdatedAt = c, now
	return nil
}

func (c *Crew) validate() error {
	if c == nil {
		return nil
	}
	for field, v := range map[string]string{"crew.name": c.Name, "crew.charter_uri": c.CharterURI, "crew.external_manager": c.ExternalManager} {
		if len(v) > 512 {
			return errs.Invalid("%s is longer than 512 bytes", field)
		}
		if strings.ContainsFunc(v, unicode.IsControl) {
			return errs.Invalid("%s holds control characters", field)
		}
	}
	return nil
}

// FrozenError is the refusal for writes into a validated workarea.
func FrozenError(id string) error {
	return errs.New(errs.Frozen, "status ladder: a validated workarea refuses new writes (D8)",
		"workarea %s is validated; writes are refused. Demote, erasure and crew-metadata update are its only admissible mutations.", id)
}
