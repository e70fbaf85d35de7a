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
)

// Brains is a session brain's storage. Every call runs in the caller's
// unit of work.
type Brains interface {
	// Get reads one entry (ErrNotFound when nothing is stored there).
	Get(ctx context.Context, tenant, session, path string) (domain.BrainEntry, error)
	// Version is the version stored at path, "" when nothing is.
	Version(ctx context.Context, tenant, session, path string) (string, error)
	Put(ctx context.Context, tenant, session string, e domain.BrainEntry, byKey string) error
	// Delete removes an entry; false when nothing was stored there.
	Delete(ctx context.Context, tenant, session, path string) (bool, error)
	// Usage is what a brain holds, and the bytes stored at path.
	Usage(ctx context.Context, tenant, session, path string) (BrainUsage, error)
	// List reads entries under prefix in path order after the path after
	// (no content).
	List(ctx context.Context, tenant, session, prefix, after string, limit int) ([]domain.BrainEntry, error)
	// Copy copies one brain into another (a fork's).
	Copy(ctx context.Context, tenant, from, to string) error
	// Drop deletes a brain (a pruned session's).
	Drop(ctx context.Context, tenant, session string) error
}

// BrainSearch is the retrieval context's search corpus: a brain's
// entries are searchable by the session's owner alone (search asks which
// sessions the caller owns), kept in step in the unit of work that changes
// the brain.
type BrainSearch interface {
	IndexBrainEntry(ctx context.Context, tenant string, sess domain.Session, path, content, byKey string, at time.Time) error
	DropBrainEntry(ctx context.Context, tenant, session, path string) error
	CopyBrain(ctx context.Context, tenant, from, to string) error
	DropBrain(ctx context.Context, tenant, session string) error
}

// BrainUsage is what a brain holds: entries, bytes, and the bytes at one
// path (which a write there replaces).
type BrainUsage struct{ Entries, Bytes, AtPath int64 }

// BrainRef names the brain a call reaches: a store, and a session by id,
// or the caller key's active session (in Workarea, when named).
type BrainRef struct {
	Store    string
	Session  string
	Workarea string
}

// BrainPage is one page of a brain's listing.
type BrainPage struct {
	Session    domain.Session
	Entries    []domain.BrainEntry
	NextCursor string
}

// brainOf resolves the brain a call names, in the caller's unit of work.
// Only the session's owner reaches it; anyone else, a pruned session and
// an unknown one all answer access.not_found (issue 15). A write needs a
// running session, and locks its row: the store's writer lock, under which
// a conditional write compares and writes.
func (s *Service) brainOf(ctx context.Context, c auth.Caller, ref BrainRef, write bool) (domain.Session, error) {
	if err := domain.CheckStore(ref.Store, write); err != nil {
		return domain.Session{}, err
	}
	id := ref.Session
	if id == "" {
		var err error
		if id, err = s.activeBrain(ctx, c, ref.Workarea); err != nil {
			return domain.Session{}, err
		}
	}
	if !ids.Has(ids.Session, id) {
		return domain.Session{}, notFound("session")
	}
	// Ownership is checked on an unlocked read, so nobody else can hold
	// the session's row; a write then takes the lock and checks again
	// (the session may have changed hands meanwhile).
	sess, err := s.Repo.Get(ctx, c.TenantID, id)
	for locked := false; ; locked = true {
		if errors.Is(err, ErrNotFound) {
			return domain.Session{}, notFound("session")
		}
		if err != nil {
			return domain.Session{}, fmt.Errorf("load session: %w", err)
		}
		if err := s.mayUseBrain(ctx, c, sess, write); err != nil {
			return domain.Session{}, err
		}
		if !write || locked {
			return sess, nil
		}
		sess, err = s.Repo.GetForUpdate(ctx, c.TenantID, id)
	}
}

// mayUseBrain applies the brain's rules to a loaded session: its owner
// alone, not pruned, a workarea the key still reads (writes: writes), and
// for a write a running session.
func (s *Service) mayUseBrain(ctx context.Context, c auth.Caller, sess domain.Session, write bool) error {
	if !sess.OwnedBy(c.PrincipalID) || sess.Status == domain.Pruned {
		return notFound("session")
	}
	w, err := s.readable(ctx, sess.WorkareaID)
	if errs.Is(err, errs.NotFound) {
		return notFound("session")
	}
	if err != nil {
		return err
	}
	if !write {
		return nil
	}
	if !w.Writer {
		return errs.New(errs.Denied, "writing a session brain needs writer on the session's workarea (D7)",
			"this key has no writer access on workarea %s", w.ID)
	}
	if sess.Status != domain.Running {
		return errs.New(errs.SessionConflict, domain.RuleEnded,
			"session %s is %s: its brain takes writes while it runs (session_start resumes it)", sess.ID, sess.Status)
	}
	return nil
}

// activeBrain is the caller key's active session, in workarea when named;
// a key with none is session.conflict (seed 002), with several it must
// name one.
func (s *Service) activeBrain(ctx context.Context, c auth.Caller, workarea string) (string, error) {
	actives, err := s.Repo.ActiveOf(ctx, c.TenantID, c.KeyID)
	if err != nil {
		return "", fmt.Errorf("active sessions: %w", err)
	}
	none := func(where string) error {
		return errs.New(errs.SessionConflict, "a brain call without session reaches the key's active session (seed 002)",
			"this key has no active session%s: session_start first, or pass session", where)
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
		return "", none(" in workarea " + w.ID)
	}
	switch len(actives) {
	case 0:
		return "", none("")
	case 1:
		return actives[0].SessionID, nil
	}
	return "", errs.Invalid("this key has active sessions in %d workareas: pass session or workarea", len(actives))
}

// BrainGet reads one entry of the caller's own session brain; version, if
// given, must be the entry's current one (a session brain keeps no
// history).
func (s *Service) BrainGet(ctx context.Context, ref BrainRef, path, version string) (domain.Session, domain.BrainEntry, error) {
	c, err := auth.ContentCaller(ctx, "brains")
	if err != nil {
		return domain.Session{}, domain.BrainEntry{}, err
	}
	if err := domain.CheckPath(path); err != nil {
		return domain.Session{}, domain.BrainEntry{}, err
	}
	var sess domain.Session
	var e domain.BrainEntry
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		if sess, err = s.brainOf(ctx, c, ref, false); err != nil {
			return err
		}
		e, err = s.Brains.Get(ctx, c.TenantID, sess.ID, path)
		if errors.Is(err, ErrNotFound) || (err == nil && version != "" && version != e.Version) {
			what := "nothing is stored at " + path
			if err == nil {
				what = fmt.Sprintf("%s is at %s; a session brain keeps no earlier versions", path, e.Version)
			}
			return errs.New(errs.NotFound, "a brain read names a stored entry (seed 002)", "%s", what)
		}
		return err
	})
	return sess, e, err
}

// BrainPut writes one entry of the caller's own running session brain:
// unconditionally, or while the stored bytes still hash to ifVersion
// ("absent": only where nothing is stored). Journalled brain.put (path,
// version and size, never the content).
func (s *Service) BrainPut(ctx context.Context, ref BrainRef, path, content, ifVersion string) (domain.Session, domain.BrainEntry, bool, error) {
	c, err := auth.ContentCaller(ctx, "brains")
	if err != nil {
		return domain.Session{}, domain.BrainEntry{}, false, err
	}
	// Every check on the input comes before the unit of work: an
	// oversized value is refused before anything is stored.
	for _, check := range []error{domain.CheckPath(path), domain.CheckContent(content), domain.CheckIfVersion(ifVersion)} {
		if check != nil {
			return domain.Session{}, domain.BrainEntry{}, false, check
		}
	}
	e := domain.BrainEntry{Path: path, Content: []byte(content), Version: domain.VersionOf([]byte(content)), Size: int64(len(content)), UpdatedAt: s.now()}
	var sess domain.Session
	var created bool
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		if sess, err = s.brainOf(ctx, c, ref, true); err != nil {
			return err
		}
		stored, err := s.Brains.Version(ctx, c.TenantID, sess.ID, path)
		if err != nil {
			return fmt.Errorf("read brain version: %w", err)
		}
		if err := domain.Matches(ifVersion, stored); err != nil {
			return err
		}
		created = stored == ""
		u, err := s.Brains.Usage(ctx, c.TenantID, sess.ID, path)
		if err != nil {
			return fmt.Errorf("measure brain: %w", err)
		}
		if err := domain.CheckUsage(u.Entries, u.Bytes-u.AtPath+e.Size, created); err != nil {
			return err
		}
		if err := s.Brains.Put(ctx, c.TenantID, sess.ID, e, c.KeyID); err != nil {
			return fmt.Errorf("write brain entry: %w", err)
		}
		if s.Search != nil {
			if err := s.Search.IndexBrainEntry(ctx, c.TenantID, sess, path, content, c.KeyID, e.UpdatedAt); err != nil {
				return fmt.Errorf("index brain entry for search: %w", err)
			}
		}
		return s.record(ctx, c, "brain.put", sess, map[string]any{"path": path, "version": e.Version, "size_bytes": e.Size, "created": created})
	})
	return sess, e, created, err
}

// BrainDelete removes one entry of the caller's own running session brain,
// under ifVersion as BrainPut; a path with nothing stored is
// access.not_found. Journalled brain.delete.
func (s *Service) BrainDelete(ctx context.Context, ref BrainRef, path, ifVersion string) (domain.Session, error) {
	c, err := auth.ContentCaller(ctx, "brains")
	if err != nil {
		return domain.Session{}, err
	}
	if err := domain.CheckPath(path); err != nil {
		return domain.Session{}, err
	}
	if err := domain.CheckIfVersion(ifVersion); err != nil {
		return domain.Session{}, err
	}
	var sess domain.Session
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		if sess, err = s.brainOf(ctx, c, ref, true); err != nil {
			return err
		}
		stored, err := s.Brains.Version(ctx, c.TenantID, sess.ID, path)
		if err != nil {
			return fmt.Errorf("read brain version: %w", err)
		}
		if stored == "" {
			return errs.New(errs.NotFound, "a brain delete names a stored entry (seed 002)", "nothing is stored at %s", path)
		}
		if err := domain.Matches(ifVersion, stored); err != nil {
			return err
		}
		if _, err := s.Brains.Delete(ctx, c.TenantID, sess.ID, path); err != nil {
			return fmt.Errorf("delete brain entry: %w", err)
		}
		if s.Search != nil {
			if err := s.Search.DropBrainEntry(ctx, c.TenantID, sess.ID, path); err != nil {
				return fmt.Errorf("drop brain entry from search: %w", err)
			}
		}
		return s.record(ctx, c, "brain.delete", sess, map[string]any{"path": path, "version": stored})
	})
	return sess, err
}

// BrainList lists the caller's own session brain under prefix, in path
// order, a page of limit after cursor (the last path of the page before).
func (s *Service) BrainList(ctx context.Context, ref BrainRef, prefix, cursor string, limit int) (BrainPage, error) {
	c, err := auth.ContentCaller(ctx, "brains")
	if err != nil {
		return BrainPage{}, err
	}
	if limit, err = brainPageSize(limit, prefix, cursor); err != nil {
		return BrainPage{}, err
	}
	var page BrainPage
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		if page.Session, err = s.brainOf(ctx, c, ref, false); err != nil {
			return err
		}
		page.Entries, page.NextCursor, err = s.brainPage(ctx, c.TenantID, page.Session.ID, prefix, cursor, limit)
		return err
	})
	return page, err
}

func brainPageSize(limit int, prefix, cursor string) (int, error) {
	if err := domain.CheckPrefix(prefix); err != nil {
		return 0, err
	}
	if cursor != "" {
		if err := domain.CheckPath(cursor); err != nil {
			return 0, errs.Invalid("cursor: not one this listing gave (want a next_cursor)")
		}
	}
	switch {
	case limit == 0:
		return domain.DefaultBrainPage, nil
	case limit < 0 || limit > domain.MaxBrainPage:
		return 0, errs.New(errs.LimitCeiling, "a brain listing is bounded: limit 1–500", "limit %d is outside 1–%d", limit, domain.MaxBrainPage)
	}
	return limit, nil
}

func (s *Service) brainPage(ctx context.Context, tenant, session, prefix, cursor string, limit int) ([]domain.BrainEntry, string, error) {
	entries, err := s.Brains.List(ctx, tenant, session, prefix, cursor, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list brain: %w", err)
	}
	if len(entries) > limit {
		return entries[:limit], entries[limit-1].Path, nil
	}
	return entries, "", nil
}

// BrainOversight is an admin's read of a session brain over HTTP (issue
// 15): one entry (path) or a page of the listing. It needs admin on the
// session's workarea, and is journalled brain.admin_read, in the same unit
// of work as the read.
func (s *Service) BrainOversight(ctx context.Context, sessionID, path, prefix, cursor string, limit int) (BrainPage, *domain.BrainEntry, error) {
	c, err := auth.ContentCaller(ctx, "brains")
	if err != nil {
		return BrainPage{}, nil, err
	}
	if path != "" {
		if err := domain.CheckPath(path); err != nil {
			return BrainPage{}, nil, err
		}
	} else if limit, err = brainPageSize(limit, prefix, cursor); err != nil {
		return BrainPage{}, nil, err
	}
	var page BrainPage
	var one *domain.BrainEntry
	var missing bool
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		sess, w, err := s.session(ctx, c.TenantID, sessionID)
		if err != nil {
			return err
		}
		if !w.Admin {
			return errs.New(errs.Denied, "an admin of a session's workarea reads its brain for oversight (issue 15)",
				"reading session %s's brain needs admin on its workarea", sess.ID)
		}
		if sess.Status == domain.Pruned {
			return notFound("session")
		}
		page.Session = sess
		payload := map[string]any{"path": path, "prefix": prefix}
		if path != "" {
			e, err := s.Brains.Get(ctx, c.TenantID, sess.ID, path)
			// A read of nothing is journalled too: an admin's probes of a
			// brain are on the record.
			missing = errors.Is(err, ErrNotFound)
			if err != nil && !missing {
				return fmt.Errorf("read brain entry: %w", err)
			}
			one = &e
		} else if page.Entries, page.NextCursor, err = s.brainPage(ctx, c.TenantID, sess.ID, prefix, cursor, limit); err != nil {
			return err
		}
		payload["found"] = !missing
		return s.record(ctx, c, "brain.admin_read", sess, payload)
	})
	if err == nil && missing {
		return BrainPage{}, nil, errs.New(errs.NotFound, "a brain read names a stored entry (seed 002)", "nothing is stored at %s", path)
	}
	return page, one, err
}
