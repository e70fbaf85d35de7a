package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

// Deps are the service's ports.
type Deps struct {
	Repo   Repository
	Brains Brains
	// KB is the knowledge base the brain tools reach with store
	// "project" (nil: none).
	KB KnowledgeBase
	// Search keeps brains searchable by their owners (nil: not searched).
	Search  BrainSearch
	Access  Access
	Journal Journal
	Tx      Transactor
	Now     func() time.Time
}

// Service is the sessions context's application service.
type Service struct{ Deps }

// New returns a service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{d}
}

func (s *Service) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

const ruleAccess = "effective access (D7); unknown and out-of-scope are indistinguishable"

func notFound(what string) error {
	return errs.New(errs.NotFound, ruleAccess, "no %s readable by this key with that reference", what)
}

// readable resolves a workarea the caller may read; one it may not is
// access.not_found, exactly as a missing one.
func (s *Service) readable(ctx context.Context, ref string) (Workarea, error) {
	w, err := s.Access.Workarea(ctx, ref)
	if errs.Is(err, errs.NotFound) || (err == nil && !w.Reader) {
		return Workarea{}, notFound("workarea")
	}
	return w, err
}

// session loads a session for update and the caller's access at its
// workarea; a session the caller may not read is access.not_found, exactly
// as a missing one (a foreign tenant's included).
func (s *Service) session(ctx context.Context, tenant, id string) (domain.Session, Workarea, error) {
	return s.sessionFor(ctx, tenant, id, false)
}

// sessionFor is session; with adminOnly an admin of the workarea that does
// not read it (an operator) finds it too (reassignment).
func (s *Service) sessionFor(ctx context.Context, tenant, id string, adminOnly bool) (domain.Session, Workarea, error) {
	if !ids.Has(ids.Session, id) {
		return domain.Session{}, Workarea{}, notFound("session")
	}
	sess, err := s.Repo.GetForUpdate(ctx, tenant, id)
	if errors.Is(err, ErrNotFound) {
		return domain.Session{}, Workarea{}, notFound("session")
	}
	if err != nil {
		return domain.Session{}, Workarea{}, fmt.Errorf("load session: %w", err)
	}
	w, err := s.Access.Workarea(ctx, sess.WorkareaID)
	if errs.Is(err, errs.NotFound) || (err == nil && !w.Reader && !(adminOnly && w.Admin)) {
		return domain.Session{}, Workarea{}, notFound("session")
	}
	return sess, w, err
}

func (s *Service) record(ctx context.Context, c auth.Caller, typ string, sess domain.Session, payload map[string]any) error {
	payload["name"], payload["owner"] = sess.Name, sess.Owner.Principal
	_, err := s.Journal.Append(ctx, c.TenantID, journal.Event{
		Type: typ, Actor: c.KeyID, Workarea: sess.WorkareaID,
		Subject: map[string]any{"session_id": sess.ID}, Payload: payload,
	})
	return err
}

// End is session_end's command: a session by id, or the caller's active
// one (in Workarea when given).
type End struct {
	SessionID   string
	Workarea    string
	HandoffNote string
}

// End ends a session with a handoff note: its owner or an admin of its
// workarea may; others who can read it get access.denied, the rest
// access.not_found. Ending an ended session is session.conflict.
func (s *Service) End(ctx context.Context, cmd End) (domain.Session, error) {
	c, err := auth.ContentCaller(ctx, "sessions")
	if err != nil {
		return domain.Session{}, err
	}
	if err := domain.CheckNote(cmd.HandoffNote); err != nil {
		return domain.Session{}, err
	}
	var out domain.Session
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		id := cmd.SessionID
		if id == "" {
			if id, err = s.activeID(ctx, c, cmd.Workarea); err != nil {
				return err
			}
		}
		sess, w, err := s.session(ctx, c.TenantID, id)
		if err != nil {
			return err
		}
		if err := sess.MayEnd(c.PrincipalID, w.Admin); err != nil {
			return err
		}
		if err := sess.End(c.KeyID, cmd.HandoffNote, s.now()); err != nil {
			return err
		}
		if err := s.save(ctx, sess); err != nil {
			return err
		}
		if err := s.Repo.ClearActive(ctx, c.TenantID, sess.ID); err != nil {
			return fmt.Errorf("clear active: %w", err)
		}
		out = sess
		return s.record(ctx, c, "session.end", sess, map[string]any{
			"by_owner": sess.OwnedBy(c.PrincipalID), "handoff_note_bytes": len(sess.HandoffNote),
		})
	})
	return out, err
}

// activeID is the caller key's active session, in workarea when named;
// without one it must be unambiguous.
func (s *Service) activeID(ctx context.Context, c auth.Caller, workarea string) (string, error) {
	actives, err := s.Repo.ActiveOf(ctx, c.TenantID, c.KeyID)
	if err != nil {
		return "", fmt.Errorf("active sessions: %w", err)
	}
	if workarea != "" {
		w, err := s.readable(ctx, workarea)
		if err != nil {
			return "", err
		}
		for _, a := range actives {
			if a.WorkareaID == w.ID {
				return a.SessionID, nil
			}
		}
		return "", errs.Invalid("this key has no active session in workarea %s: pass session_id", w.ID)
	}
	switch len(actives) {
	case 0:
		return "", errs.Invalid("this key has no active session: pass session_id")
	case 1:
		return actives[0].SessionID, nil
	}
	return "", errs.Invalid("this key has active sessions in %d workareas: pass session_id or workarea", len(actives))
}

func (s *Service) save(ctx context.Context, sess domain.Session) error {
	if err := s.Repo.Update(ctx, sess); err != nil {
		return fmt.Errorf("update session: %w", err)
	}
	return nil
}

// Reassign moves a running session to the principal behind toKey: an
// admin of its workarea's move when the agent holding it is not coming
// back. The new owner's key must hold writer there; its active session in
// the workarea becomes this one, and no other key keeps a pointer to it.
func (s *Service) Reassign(ctx context.Context, id, toKey string) (domain.Session, error) {
	// An operator reassigns too (seed 000: an admin or operator verb); it
	// is shown the session's record without its handoff note (D9).
	c, err := auth.Required(ctx)
	if err != nil {
		return domain.Session{}, err
	}
	if toKey == "" {
		return domain.Session{}, errs.Invalid("to_key_id: the key of the agent taking the session is required")
	}
	var out domain.Session
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		sess, w, err := s.sessionFor(ctx, c.TenantID, id, true)
		if err != nil {
			return err
		}
		if !w.Admin {
			return errs.New(errs.Denied, "an admin of a session's workarea reassigns it (seed 002)",
				"reassigning session %s needs admin on its workarea", sess.ID)
		}
		to, err := s.Access.KeyAt(ctx, toKey, sess.WorkareaID)
		if err != nil {
			return err
		}
		if to.Role == "operator" || !to.Writer {
			return errs.New(errs.Denied, "a session's owner holds writer on its workarea (D7)",
				"key %s holds no writer access on workarea %s", to.KeyID, sess.WorkareaID)
		}
		if clash, err := s.Repo.ByOwnerNameForUpdate(ctx, c.TenantID, sess.WorkareaID, to.PrincipalID, sess.Name); err == nil {
			return errs.New(errs.SessionConflict, domain.RuleName, "%s already holds a session named %q in this workarea (%s)",
				to.Principal, sess.Name, clash.ID)
		} else if !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("load session by name: %w", err)
		}
		from := sess.Owner.Principal
		now := s.now()
		if err := sess.Reassign(domain.Owner{PrincipalID: to.PrincipalID, Principal: to.Principal, KeyID: to.KeyID}, now); err != nil {
			return err
		}
		if err := s.save(ctx, sess); err != nil {
			return err
		}
		if err := s.Repo.ClearActive(ctx, c.TenantID, sess.ID); err != nil {
			return fmt.Errorf("clear active: %w", err)
		}
		if err := s.Repo.SetActive(ctx, c.TenantID, to.KeyID, sess.WorkareaID, sess.ID, now); err != nil {
			return fmt.Errorf("set active: %w", err)
		}
		out = sess
		if !w.Reader { // an operator, or an admin denied reader there
			out.HandoffNote = ""
		}
		return s.record(ctx, c, "session.reassign", sess, map[string]any{"from_owner": from, "to_key_id": to.KeyID})
	})
	return out, err
}

// Prune ends an ended session's retention (an admin of its workarea; seed
// 002: the brain is retained until the human prunes it): its handoff note
// goes, the record and its name stay, and nobody may take the name or
// pick the session up again.
func (s *Service) Prune(ctx context.Context, id string) (domain.Session, error) {
	c, err := auth.ContentCaller(ctx, "sessions")
	if err != nil {
		return domain.Session{}, err
	}
	var out domain.Session
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		sess, w, err := s.session(ctx, c.TenantID, id)
		if err != nil {
			return err
		}
		if !w.Admin {
			return errs.New(errs.Denied, "the human (an admin of a session's workarea) prunes it (seed 002)",
				"pruning session %s needs admin on its workarea", sess.ID)
		}
		if err := sess.Prune(s.now()); err != nil {
			return err
		}
		if err := s.save(ctx, sess); err != nil {
			return err
		}
		if err := s.Repo.ClearActive(ctx, c.TenantID, sess.ID); err != nil {
			return fmt.Errorf("clear active: %w", err)
		}
		if err := s.Brains.Drop(ctx, c.TenantID, sess.ID); err != nil {
			return fmt.Errorf("drop brain: %w", err)
		}
		if s.Search != nil {
			if err := s.Search.DropBrain(ctx, c.TenantID, sess.ID); err != nil {
				return fmt.Errorf("drop brain from search: %w", err)
			}
		}
		out = sess
		return s.record(ctx, c, "session.prune", sess, map[string]any{})
	})
	return out, err
}
