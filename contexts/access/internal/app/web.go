package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

// WebKind says what a web credential is.
type WebKind string

// The web credentials: a signed-in browser's session and a one-time
// sign-in code (make run's link).
const (
	WebSession WebKind = "session"
	WebCode    WebKind = "code"
)

// WebCredential is a stored web credential; only the SHA-256 of its
// secret is kept (Verifier).
type WebCredential struct {
	TenantID  string
	ID        string
	KeyID     string
	Kind      WebKind
	Verifier  []byte
	CreatedAt time.Time
	ExpiresAt time.Time
	EndedAt   *time.Time
	// Caller is the key the credential acts as, as it is now (its
	// revocation in KeyRevoked).
	Caller     auth.Caller
	KeyRevoked bool
}

// WebSignedIn is a new web credential; Token is shown only here.
type WebSignedIn struct {
	ID        string
	Token     string
	ExpiresAt time.Time
	Caller    auth.Caller
}

// The rules the web sign-in's refusals name.
const (
	ruleWebSession = "a web session acts as one live key until it expires, is signed out or its key is revoked"
	ruleWebCode    = "a sign-in code is used once, before it expires, and only while its key is live"
)

// SignInWeb checks a pasted key and starts a web session acting as it,
// journalled as web.sign_in.
func (s *Service) SignInWeb(ctx context.Context, token string, ttl time.Duration) (WebSignedIn, error) {
	c, err := s.Authenticate(ctx, token)
	if err != nil {
		return WebSignedIn{}, err
	}
	return s.startWeb(ctx, c, WebSession, ttl, "key")
}

// IssueWebCode mints a one-time sign-in code for the calling key, valid
// for ttl: whoever opens the link it goes into is signed in as that key.
func (s *Service) IssueWebCode(ctx context.Context, ttl time.Duration) (WebSignedIn, error) {
	c, err := caller(ctx)
	if err != nil {
		return WebSignedIn{}, err
	}
	return s.startWeb(ctx, c, WebCode, ttl, "")
}

// RedeemWebCode spends a sign-in code (once) and starts a web session for
// its key.
func (s *Service) RedeemWebCode(ctx context.Context, code string, ttl time.Duration) (WebSignedIn, error) {
	refused := errs.New(errs.AuthInvalid, ruleWebCode, "the sign-in code is not valid (unknown, used, expired or its key revoked); paste a key instead")
	var out WebSignedIn
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		cr, err := s.webResolve(ctx, domain.WebCodePrefix, code, WebCode)
		if err != nil {
			return refused
		}
		ended, err := s.repo.WebCredentialEnd(ctx, cr.TenantID, cr.ID, s.now().UTC())
		if err != nil {
			return fmt.Errorf("spend sign-in code: %w", err)
		}
		if !ended { // spent by a concurrent request
			return refused
		}
		out, err = s.startWebTx(ctx, cr.Caller, WebSession, ttl, "code")
		return err
	})
	return out, err
}

// PeekWebCode says which key a sign-in code would sign in as, without
// spending it (the confirmation page).
func (s *Service) PeekWebCode(ctx context.Context, code string) (auth.Caller, error) {
	cr, err := s.webResolve(ctx, domain.WebCodePrefix, code, WebCode)
	if err != nil {
		return auth.Caller{}, errs.New(errs.AuthInvalid, ruleWebCode, "the sign-in code is not valid (unknown, used, expired or its key revoked); paste a key instead")
	}
	return cr.Caller, nil
}

// ResolveWeb finds the live web session a cookie names and the key it
// acts as. Anything else (unknown, malformed, expired, signed out, key
// revoked) is auth.invalid_key.
func (s *Service) ResolveWeb(ctx context.Context, token string) (auth.Caller, string, error) {
	cr, err := s.webResolve(ctx, domain.WebSessionPrefix, token, WebSession)
	if err != nil {
		return auth.Caller{}, "", err
	}
	return cr.Caller, cr.ID, nil
}

// SignOutWeb ends the web session token names, journalled as
// web.sign_out. Ending an already ended session changes nothing.
func (s *Service) SignOutWeb(ctx context.Context, token string) error {
	return s.tx.InTx(ctx, func(ctx context.Context) error {
		cr, err := s.webResolve(ctx, domain.WebSessionPrefix, token, WebSession)
		if err != nil {
			return err
		}
		ended, err := s.repo.WebCredentialEnd(ctx, cr.TenantID, cr.ID, s.now().UTC())
		if err != nil || !ended {
			return err
		}
		return s.record(ctx, cr.TenantID, journal.Event{
			Type: "web.sign_out", Actor: cr.KeyID,
			Subject: map[string]any{"web_session_id": cr.ID},
		})
	})
}

func (s *Service) webResolve(ctx context.Context, prefix, token string, kind WebKind) (WebCredential, error) {
	refused := errs.New(errs.AuthInvalid, ruleWebSession, "the web session is not valid (unknown, expired, signed out or its key revoked); sign in again")
	selector, verifier, ok := domain.ParseTokenWith(prefix, token)
	if !ok {
		return WebCredential{}, refused
	}
	cr, err := s.repo.WebCredentialBySelector(ctx, selector)
	if errors.Is(err, ErrNotFound) {
		return WebCredential{}, refused
	}
	if err != nil {
		return WebCredential{}, fmt.Errorf("look up web credential: %w", err)
	}
	if !domain.VerifierMatches(cr.Verifier, verifier) || cr.Kind != kind || cr.EndedAt != nil ||
		cr.KeyRevoked || !s.now().Before(cr.ExpiresAt) {
		return WebCredential{}, refused
	}
	return cr, nil
}

func (s *Service) startWeb(ctx context.Context, c auth.Caller, kind WebKind, ttl time.Duration, via string) (WebSignedIn, error) {
	var out WebSignedIn
	err := s.tx.InTx(ctx, func(ctx context.Context) (err error) {
		out, err = s.startWebTx(ctx, c, kind, ttl, via)
		return err
	})
	return out, err
}

func (s *Service) startWebTx(ctx context.Context, c auth.Caller, kind WebKind, ttl time.Duration, via string) (WebSignedIn, error) {
	if ttl <= 0 {
		return WebSignedIn{}, errs.Invalid("a web credential's lifetime must be positive, not %s", ttl)
	}
	prefix, event := domain.WebSessionPrefix, "web.sign_in"
	if kind == WebCode {
		prefix, event = domain.WebCodePrefix, "web.code_issue"
	}
	tok, err := domain.NewTokenWith(prefix)
	if err != nil {
		return WebSignedIn{}, fmt.Errorf("mint web token: %w", err)
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	cr := WebCredential{TenantID: c.TenantID, ID: ids.New(ids.WebSession), KeyID: c.KeyID, Kind: kind,
		Verifier: tok.Verifier, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	if err := s.repo.WebCredentialCreate(ctx, cr, tok.Selector); err != nil {
		return WebSignedIn{}, fmt.Errorf("store web credential: %w", err)
	}
	payload := map[string]any{"expires_at": cr.ExpiresAt}
	if via != "" {
		payload["via"] = via
	}
	err = s.record(ctx, c.TenantID, journal.Event{
		Type: event, Actor: c.KeyID,
		Subject: map[string]any{"web_session_id": cr.ID, "key_id": c.KeyID},
		Payload: payload,
	})
	return WebSignedIn{ID: cr.ID, Token: tok.Plain, ExpiresAt: cr.ExpiresAt, Caller: c}, err
}

// WebKeep is how long ended and expired web credentials are kept before
// the sweep deletes them (their journal events stay).
const WebKeep = 7 * 24 * time.Hour

// SweepWeb deletes up to limit web credentials that ended or expired more
// than WebKeep ago.
func (s *Service) SweepWeb(ctx context.Context, limit int) (int64, error) {
	return s.repo.WebCredentialsPurge(ctx, s.now().Add(-WebKeep), limit)
}
