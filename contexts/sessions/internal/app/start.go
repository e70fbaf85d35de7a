package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
)

// Start is session_start's command.
type Start struct {
	Workarea string
	Name     string
	From     string // a session id to adopt (ended) or fork (running)
}

// Started is session_start's answer: the session, how it was reached, and
// the handoff note the previous owner left (the source's, on a pickup).
type Started struct {
	Session     domain.Session
	Mode        domain.Mode
	HandoffNote string
}

// Start registers or resumes the caller's own session by (workarea, name)
// (idempotent on the name), or with From picks another agent's session up:
// an ended one is adopted (ownership moves, the id stays), a running one
// forked into a new session. It needs writer on the workarea and records
// the result as the key's active session there.
func (s *Service) Start(ctx context.Context, cmd Start) (Started, error) {
	c, err := auth.ContentCaller(ctx, "sessions")
	if err != nil {
		return Started{}, err
	}
	if err := domain.CheckName(cmd.Name); err != nil {
		return Started{}, err
	}
	w, err := s.readable(ctx, cmd.Workarea)
	if err != nil {
		return Started{}, err
	}
	if !w.Writer {
		return Started{}, errs.New(errs.Denied, "a session is started by a key with writer on its workarea (D7)",
			"this key holds no writer access on workarea %s", w.ID)
	}
	if cmd.From != "" && !ids.Has(ids.Session, cmd.From) {
		return Started{}, notFound("session")
	}
	me := domain.Owner{PrincipalID: c.PrincipalID, Principal: c.Principal, KeyID: c.KeyID}
	var out Started
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		mine, err := s.Repo.ByOwnerNameForUpdate(ctx, c.TenantID, w.ID, c.PrincipalID, cmd.Name)
		found := err == nil
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("load session by name: %w", err)
		}
		switch {
		case found && cmd.From != "" && !domain.Continues(mine, cmd.From):
			return errs.New(errs.SessionConflict, domain.RuleName,
				"you already hold a session named %q in this workarea (%s): pick another name to take %s up", cmd.Name, mine.ID, cmd.From)
		case found && mine.CheckTakeable() != nil:
			return mine.CheckTakeable()
		case found:
			out, err = s.resume(ctx, c, mine)
		case cmd.From != "":
			out, err = s.pickup(ctx, c, w, me, cmd)
		default:
			out, err = s.startNew(ctx, c, w, me, cmd.Name)
		}
		if err != nil {
			return err
		}
		if err := s.Repo.SetActive(ctx, c.TenantID, c.KeyID, w.ID, out.Session.ID, s.now()); err != nil {
			return fmt.Errorf("set active: %w", err)
		}
		return nil
	})
	return out, err
}

func (s *Service) startNew(ctx context.Context, c auth.Caller, w Workarea, me domain.Owner, name string) (Started, error) {
	sess, err := domain.New(c.TenantID, ids.New(ids.Session), w.ID, w.IDPath, name, me, s.now())
	if err != nil {
		return Started{}, err
	}
	inserted, err := s.Repo.Insert(ctx, sess)
	if err != nil {
		return Started{}, fmt.Errorf("insert session: %w", err)
	}
	if !inserted {
		// A concurrent start of the same name committed first: resume it.
		mine, err := s.Repo.ByOwnerNameForUpdate(ctx, c.TenantID, w.ID, c.PrincipalID, name)
		if err != nil {
			return Started{}, fmt.Errorf("load session by name: %w", err)
		}
		return s.resume(ctx, c, mine)
	}
	return Started{Session: sess, Mode: domain.Started}, s.record(ctx, c, "session.start", sess, map[string]any{"mode": domain.Started})
}

// resume makes the caller's own session its working one; reopening an
// ended one is a change and is journalled, resuming a running one is not.
func (s *Service) resume(ctx context.Context, c auth.Caller, mine domain.Session) (Started, error) {
	keyChanged := mine.Owner.KeyID != c.KeyID
	reopened := mine.Resume(c.KeyID, s.now())
	out := Started{Session: mine, Mode: domain.Resumed, HandoffNote: mine.HandoffNote}
	if !reopened && !keyChanged {
		return out, nil
	}
	if err := s.save(ctx, mine); err != nil {
		return Started{}, err
	}
	if !reopened {
		return out, nil
	}
	return out, s.record(ctx, c, "session.start", mine, map[string]any{"mode": domain.Resumed})
}

// pickup adopts or forks another agent's session in the same workarea.
func (s *Service) pickup(ctx context.Context, c auth.Caller, w Workarea, me domain.Owner, cmd Start) (Started, error) {
	src, _, err := s.session(ctx, c.TenantID, cmd.From)
	if err != nil {
		return Started{}, err
	}
	if src.WorkareaID != w.ID {
		return Started{}, errs.Invalid("from: session %s is in workarea %s, not %s", src.ID, src.WorkareaID, w.ID)
	}
	if src.OwnedBy(c.PrincipalID) {
		return Started{}, errs.Invalid("from: session %s is your own, named %q: resume it by that name", src.ID, src.Name)
	}
	if err := src.CheckTakeable(); err != nil {
		return Started{}, err
	}
	note, now := src.HandoffNote, s.now()
	if src.Pickup() == domain.Adopted {
		if err := src.Adopt(me, cmd.Name, now); err != nil {
			return Started{}, err
		}
		if err := s.save(ctx, src); err != nil {
			return Started{}, err
		}
		if err := s.Repo.ClearActive(ctx, c.TenantID, src.ID); err != nil {
			return Started{}, fmt.Errorf("clear active: %w", err)
		}
		return Started{Session: src, Mode: domain.Adopted, HandoffNote: note},
			s.record(ctx, c, "session.adopt", src, map[string]any{"adopted_from": src.AdoptedFrom})
	}
	fork, err := src.Fork(ids.New(ids.Session), me, cmd.Name, now)
	if err != nil {
		return Started{}, err
	}
	inserted, err := s.Repo.Insert(ctx, fork)
	if err != nil {
		return Started{}, fmt.Errorf("insert session: %w", err)
	}
	if !inserted {
		return Started{}, errs.Retry(errs.SessionConflict, domain.RuleName, 0,
			"a concurrent session_start took the name %q: retry to resume it", cmd.Name)
	}
	// The fork's brain is a copy of the source's, taken under the source's
	// row lock (its brain's writer lock): the source is left untouched.
	if err := s.Brains.Copy(ctx, c.TenantID, src.ID, fork.ID); err != nil {
		return Started{}, fmt.Errorf("copy brain: %w", err)
	}
	if s.Search != nil {
		if err := s.Search.CopyBrain(ctx, c.TenantID, src.ID, fork.ID); err != nil {
			return Started{}, fmt.Errorf("copy brain for search: %w", err)
		}
	}
	return Started{Session: fork, Mode: domain.Forked, HandoffNote: note},
		s.record(ctx, c, "session.fork", fork, map[string]any{"forked_from": src.ID, "source_owner": src.Owner.Principal})
}

// WorkareaID resolves a workarea the caller may read (an idempotency
// record is scoped to it).
func (s *Service) WorkareaID(ctx context.Context, ref string) (string, error) {
	w, err := s.readable(ctx, ref)
	return w.ID, err
}
