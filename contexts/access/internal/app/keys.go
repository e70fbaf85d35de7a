package app

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

var principalName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$`)

// reservedPrincipals are the actors the server itself records (a deadline
// resolved by "hub", a sweep by "system"): no key may act under them.
var reservedPrincipals = map[string]bool{"hub": true, "system": true}

// badKey is the one refusal for unknown, malformed and revoked keys.
func badKey() error {
	return errs.New(errs.AuthInvalid, "every call presents a valid bearer key; there is no anonymous call",
		"the bearer key is not valid (unknown, malformed or revoked)")
}

// Authenticate resolves a bearer token. The stored verifier is compared in
// constant time.
func (s *Service) Authenticate(ctx context.Context, token string) (auth.Caller, error) {
	selector, verifier, ok := domain.ParseToken(token)
	if !ok {
		return auth.Caller{}, badKey()
	}
	k, err := s.repo.KeyBySelector(ctx, selector)
	if errors.Is(err, ErrNotFound) {
		return auth.Caller{}, badKey()
	}
	if err != nil {
		return auth.Caller{}, fmt.Errorf("look up key: %w", err)
	}
	if !domain.VerifierMatches(k.Verifier, verifier) || k.Key.RevokedAt != nil {
		return auth.Caller{}, badKey()
	}
	return auth.Caller{
		TenantID: k.TenantID, KeyID: k.Key.ID, PrincipalID: k.Key.Principal.ID,
		Principal: k.Key.Principal.Name, Role: string(k.Key.Role),
	}, nil
}

// Issued is a new key with its token, shown only here.
type Issued struct {
	Key   Key
	Token string
}

// IssueKey mints a key for a principal (created on first use).
func (s *Service) IssueKey(ctx context.Context, principal, role string) (Issued, error) {
	r, ok := domain.ParseRole(role)
	if !ok {
		return Issued{}, errs.Invalid("role %q: want one of reader, writer, dreamer, admin, operator", role)
	}
	if !principalName.MatchString(principal) {
		return Issued{}, errs.Invalid("principal %q: want 1–128 characters of letters, digits, '.', '_', '@' or '-'", principal)
	}
	if reservedPrincipals[strings.ToLower(principal)] {
		return Issued{}, errs.Invalid("principal %q is reserved: the hub resolves deadlines and the system sweeps under these names", principal)
	}
	if strings.HasPrefix(strings.ToLower(principal), string(ids.Enrolment)+"_") {
		return Issued{}, errs.Invalid("principal %q: names starting enr_ are the enrolled agents'", principal)
	}
	var out Issued
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		v, _, err := s.adminAtRoot(ctx)
		if err != nil {
			return err
		}
		out, err = s.issue(ctx, v.caller.TenantID, principal, r, v.caller.KeyID)
		return err
	})
	return out, err
}

func (s *Service) issue(ctx context.Context, tenant, principal string, role domain.Role, by string) (Issued, error) {
	p, err := s.repo.PrincipalEnsure(ctx, tenant, principal)
	if err != nil {
		return Issued{}, fmt.Errorf("ensure principal: %w", err)
	}
	tok, err := domain.NewToken()
	if err != nil {
		return Issued{}, fmt.Errorf("mint token: %w", err)
	}
	k := Key{ID: ids.New(ids.Key), Principal: p, Role: role, CreatedAt: s.now().UTC().Truncate(time.Microsecond)}
	if err := s.repo.KeyCreate(ctx, tenant, k, tok.Selector, tok.Verifier, by); err != nil {
		return Issued{}, fmt.Errorf("create key: %w", err)
	}
	err = s.record(ctx, tenant, journal.Event{
		Type: "key.issue", Actor: by,
		Subject: map[string]any{"key_id": k.ID},
		Payload: map[string]any{"principal": p.Name, "principal_id": p.ID, "role": role},
	})
	return Issued{Key: k, Token: tok.Plain}, err
}

// ListKeys lists the tenant's keys, revoked ones included.
func (s *Service) ListKeys(ctx context.Context) ([]Key, error) {
	v, _, err := s.adminAtRoot(ctx)
	if err != nil {
		return nil, err
	}
	return s.repo.KeyList(ctx, v.caller.TenantID)
}

// Revoked is the outcome of a revocation.
type Revoked struct {
	Key   Key
	Epoch int64
}

// RevokeKey revokes a key at once; its next request is refused.
func (s *Service) RevokeKey(ctx context.Context, id string) (Revoked, error) {
	var out Revoked
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		v, _, err := s.adminAtRoot(ctx)
		if err != nil {
			return err
		}
		if id == v.caller.KeyID {
			return errs.New(errs.Denied, "a key cannot revoke itself (the tenant would lose its last admin)",
				"revoke this key with another admin key")
		}
		k, err := s.keyIn(ctx, v.caller.TenantID, id)
		if err != nil {
			return err
		}
		now := s.now().UTC().Truncate(time.Microsecond)
		changed, err := s.repo.KeyRevoke(ctx, v.caller.TenantID, id, now)
		if err != nil {
			return fmt.Errorf("revoke key: %w", err)
		}
		if !changed { // already revoked: report it as it stands
			out.Key = k
			out.Epoch, err = s.repo.EpochGet(ctx, v.caller.TenantID)
			return err
		}
		k.RevokedAt = &now
		// Its web sessions end with it (they already fail to resolve
		// against a revoked key; this makes the end explicit).
		if _, err := s.repo.WebCredentialsEndForKey(ctx, v.caller.TenantID, id, now); err != nil {
			return fmt.Errorf("end web sessions: %w", err)
		}
		if out.Epoch, err = s.repo.EpochBump(ctx, v.caller.TenantID); err != nil {
			return fmt.Errorf("bump epoch: %w", err)
		}
		if err := s.repo.KeyStampRevokedEpoch(ctx, v.caller.TenantID, id, out.Epoch); err != nil {
			return fmt.Errorf("stamp revocation epoch: %w", err)
		}
		out.Key = k
		return s.record(ctx, v.caller.TenantID, journal.Event{
			Type: "key.revoke", Actor: v.caller.KeyID,
			Subject: map[string]any{"key_id": id},
			Payload: map[string]any{"permission_epoch": out.Epoch},
		})
	})
	return out, err
}

func keyNotFound() error {
	return errs.New(errs.NotFound, "keys are tenant-scoped; unknown and foreign keys are indistinguishable", "no key with that id in this tenant")
}

func (s *Service) keyIn(ctx context.Context, tenant, id string) (Key, error) {
	if !ids.Has(ids.Key, id) {
		return Key{}, keyNotFound()
	}
	k, err := s.repo.KeyGet(ctx, tenant, id)
	if errors.Is(err, ErrNotFound) {
		return Key{}, keyNotFound()
	}
	if err != nil {
		return Key{}, fmt.Errorf("load key: %w", err)
	}
	return k, nil
}

// Whoami describes the calling key.
type Whoami struct {
	Caller auth.Caller
	RootID string
}

// Whoami reports the calling identity and its tenant's root.
func (s *Service) Whoami(ctx context.Context) (Whoami, error) {
	c, err := caller(ctx)
	if err != nil {
		return Whoami{}, err
	}
	root, err := s.repo.WorkareaByPath(ctx, c.TenantID, domain.RootName)
	if err != nil {
		return Whoami{}, fmt.Errorf("load universe: %w", err)
	}
	return Whoami{Caller: c, RootID: root.ID}, nil
}

// VerifyJournal recomputes the caller's tenant's journal chain.
func (s *Service) VerifyJournal(ctx context.Context) (journal.Report, error) {
	v, _, err := s.adminAtRoot(ctx)
	if err != nil {
		return journal.Report{}, err
	}
	return s.journal.Verify(ctx, v.caller.TenantID)
}
