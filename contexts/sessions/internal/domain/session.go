// Package domain holds the sessions context's rules: what a session is,
// who owns it, and how it changes hands (start, resume, end with a handoff
// note, adopt an ended one, fork a running one, reassign), and what a
// session brain holds (paths, versions, bounds). It imports the standard
// library and platform/{errs,textsafe} only.
package domain

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/errs"
)

// Status is where a session stands.
type Status string

// The statuses.
const (
	Running Status = "running"
	Ended   Status = "ended"
	// Pruned is an ended session the human pruned: its brain and handoff
	// note are gone; the record stays and keeps its name, which no new
	// session may take.
	Pruned Status = "pruned"
)

// RulePruned is the rule a pruned session's name and pickup are refused by.
const RulePruned = "a pruned session keeps its name: no session may take it, and nobody picks the session up (seed 002)"

// ParseStatus accepts "", running or ended.
func ParseStatus(s string) (Status, error) {
	switch st := Status(s); st {
	case "", Running, Ended, Pruned:
		return st, nil
	}
	return "", errs.Invalid("status: want running or ended, got %q", s)
}

// Mode is how session_start reached its session.
type Mode string

// The modes: a new session, the caller's own again, an ended one taken
// over (same id), a running one copied into a new session.
const (
	Started Mode = "started"
	Resumed Mode = "resumed"
	Adopted Mode = "adopted"
	Forked  Mode = "forked"
)

// Limits on what a caller writes.
const (
	MaxName        = 128
	MaxHandoffNote = 16 << 10
)

// The brain's two namespaces and the conventional recovery document, which
// session_start returns so an agent knows where to look (seed 002).
const (
	NamespaceFS  = "/fs/"
	NamespaceKV  = "/kv/"
	RecoveryPath = "/fs/RECOVERY.md"
)

// Rules named by refusals.
const (
	RuleOwner   = "a session is ended by its owner or by an admin of its workarea (seed 002)"
	RuleName    = "a session name is unique per owner inside a workarea (seed 002)"
	RuleRunning = "only a running session changes hands by fork or reassignment; an ended one is adopted"
	RuleEnded   = "an ended session stays ended until it is resumed or adopted"
)

// Owner is the principal a session belongs to, and the key that took it.
type Owner struct {
	PrincipalID string
	Principal   string
	KeyID       string
}

// Session is an agent's work session in one workarea.
type Session struct {
	TenantID       string
	ID             string
	WorkareaID     string
	WorkareaIDPath string
	Name           string
	Owner          Owner
	Status         Status
	HandoffNote    string
	AdoptedFrom    string // the principal (name) an adoption took it from
	ForkedFrom     string // the session a fork copied
	StartedAt      time.Time
	UpdatedAt      time.Time
	EndedAt        *time.Time
	EndedByKeyID   string
}

// CheckName validates a session name: trimmed, 1–128 characters, one line
// without control characters.
func CheckName(name string) error {
	switch {
	case name == "":
		return errs.Invalid("name: a session name is required")
	case strings.TrimSpace(name) != name:
		return errs.Invalid("name: no leading or trailing spaces")
	case !utf8.ValidString(name):
		return errs.Invalid("name: not valid UTF-8")
	case utf8.RuneCountInString(name) > MaxName:
		return errs.Invalid("name: at most %d characters", MaxName)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return errs.Invalid("name: no control characters")
		}
	}
	return nil
}

// CheckNote validates a handoff note.
func CheckNote(note string) error {
	if len(note) > MaxHandoffNote {
		return errs.Invalid("handoff_note: at most %d bytes", MaxHandoffNote)
	}
	if !utf8.ValidString(note) {
		return errs.Invalid("handoff_note: not valid UTF-8")
	}
	return nil
}

// New starts a session owned by owner.
func New(tenant, id, workarea, idPath, name string, owner Owner, at time.Time) (Session, error) {
	if err := CheckName(name); err != nil {
		return Session{}, err
	}
	return Session{
		TenantID: tenant, ID: id, WorkareaID: workarea, WorkareaIDPath: idPath, Name: name, Owner: owner,
		Status: Running, StartedAt: at, UpdatedAt: at,
	}, nil
}

// OwnedBy reports whether principal owns the session.
func (s Session) OwnedBy(principal string) bool { return s.Owner.PrincipalID == principal }

// Resume makes the owner's session its working one again: an ended one
// runs again, keeping its handoff note. It reports whether the session
// changed.
func (s *Session) Resume(key string, at time.Time) bool {
	s.Owner.KeyID = key
	if s.Status == Running {
		return false
	}
	s.Status, s.EndedAt, s.EndedByKeyID, s.UpdatedAt = Running, nil, "", at
	return true
}

// MayEnd decides whether a caller may end the session: its owner, or an
// admin of its workarea. Others are refused with access.denied (they can
// read it; callers that cannot are refused as not found before this).
func (s Session) MayEnd(principal string, admin bool) error {
	if s.OwnedBy(principal) || admin {
		return nil
	}
	return errs.New(errs.Denied, RuleOwner, "session %s belongs to %s; only its owner or an admin of its workarea may end it",
		s.ID, s.Owner.Principal)
}

// End marks the session ended with a handoff note for whoever picks it up.
func (s *Session) End(byKey, note string, at time.Time) error {
	if err := CheckNote(note); err != nil {
		return err
	}
	if s.Status != Running {
		return errs.New(errs.SessionConflict, RuleEnded, "session %s is already %s", s.ID, s.Status)
	}
	s.Status, s.HandoffNote, s.EndedAt, s.EndedByKeyID, s.UpdatedAt = Ended, note, &at, byKey, at
	return nil
}

// Prune ends a session's retention: its handoff note and its brain go; the record and its name stay. Only an ended
// session is pruned.
func (s *Session) Prune(at time.Time) error {
	switch s.Status {
	case Running:
		return errs.New(errs.SessionConflict, RuleRunning, "session %s is running: end it before pruning it", s.ID)
	case Pruned:
		return errs.New(errs.SessionConflict, RulePruned, "session %s is pruned already", s.ID)
	}
	s.Status, s.HandoffNote, s.UpdatedAt = Pruned, "", at
	return nil
}

// CheckTakeable refuses a session a start would resume or pick up when it
// is pruned.
func (s Session) CheckTakeable() error {
	if s.Status == Pruned {
		return errs.New(errs.SessionConflict, RulePruned, "session %s (%q) is pruned; its name stays taken: pick another", s.ID, s.Name)
	}
	return nil
}

// Pickup is what session_start with from does to a source session the
// caller does not own: an ended one is adopted, a running one forked.
func (s Session) Pickup() Mode {
	if s.Status == Ended {
		return Adopted
	}
	return Forked
}

// Adopt moves an ended session to owner under name (its id, brain and
// handoff note stay) and runs it again.
func (s *Session) Adopt(owner Owner, name string, at time.Time) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if s.Status != Ended {
		return errs.New(errs.SessionConflict, RuleRunning, "session %s is running: it is forked, not adopted", s.ID)
	}
	s.AdoptedFrom = s.Owner.Principal
	s.Owner, s.Name, s.Status, s.EndedAt, s.EndedByKeyID, s.UpdatedAt = owner, name, Running, nil, "", at
	return nil
}

// Fork copies a running session into a new one for owner under name,
// leaving the source untouched.
func (s Session) Fork(id string, owner Owner, name string, at time.Time) (Session, error) {
	if s.Status != Running {
		return Session{}, errs.New(errs.SessionConflict, RuleRunning, "session %s is ended: it is adopted, not forked", s.ID)
	}
	f, err := New(s.TenantID, id, s.WorkareaID, s.WorkareaIDPath, name, owner, at)
	if err != nil {
		return Session{}, err
	}
	f.ForkedFrom = s.ID
	return f, nil
}

// Reassign moves a running session to another principal (an admin's move
// when the agent holding it is not coming back).
func (s *Session) Reassign(to Owner, at time.Time) error {
	if s.Status != Running {
		return errs.New(errs.SessionConflict, RuleRunning, "session %s is ended: an agent adopts it with session_start from", s.ID)
	}
	if s.OwnedBy(to.PrincipalID) {
		return errs.New(errs.SessionConflict, RuleRunning, "session %s already belongs to %s", s.ID, to.Principal)
	}
	s.Owner, s.UpdatedAt = to, at
	return nil
}

// Continues reports whether the caller's own session mine is what a
// session_start with from = source already produced (a retry): the source
// itself, adopted, or a fork of it.
func Continues(mine Session, source string) bool {
	return mine.ID == source || mine.ForkedFrom == source
}
