package app

import (
	"context"

	"github.com/omlhub/oml/contexts/sessions/internal/domain"
	"github.com/omlhub/oml/platform/auth"
)

// Previous returns the caller's most recently active session in the
// workarea other than the one its key works now (its active pointer
// there), for the session brief; ok is false when there is none.
func (s *Service) Previous(ctx context.Context, workareaID string) (domain.Session, bool, error) {
	c, err := auth.ContentCaller(ctx, "session brief")
	if err != nil {
		return domain.Session{}, false, err
	}
	active, err := s.Repo.ActiveOf(ctx, c.TenantID, c.KeyID)
	if err != nil {
		return domain.Session{}, false, err
	}
	current := ""
	for _, a := range active {
		if a.WorkareaID == workareaID {
			current = a.SessionID
		}
	}
	latest, err := s.Repo.LatestOfOwner(ctx, c.TenantID, workareaID, c.PrincipalID, 2)
	if err != nil {
		return domain.Session{}, false, err
	}
	for _, sess := range latest {
		if sess.ID != current {
			return sess, true, nil
		}
	}
	return domain.Session{}, false, nil
}
