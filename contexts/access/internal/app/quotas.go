package app

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
)

// Quotas are a tenant's limits: writes a minute for the whole tenant and
// requests a minute per key (0: no limit).
type Quotas struct {
	WritesPerMinute int
	Keys            map[string]int
}

// MaxPerMinute bounds a quota setting.
const MaxPerMinute = 1_000_000

// The rules a limit's refusal names.
const (
	ruleQuota = "a tenant's writes are limited per minute (D6, FR-8), enforced per replica at limit/N"
	ruleRate  = "a key's requests are limited per minute (FR-8), enforced per replica at limit/N"
)

// SetQuota sets the tenant's writes a minute (keyID "") or a key's requests
// a minute; 0 clears it. Admin or operator on universe; journalled as
// quota.set.
func (s *Service) SetQuota(ctx context.Context, keyID string, perMinute int) (Quotas, error) {
	if perMinute < 0 || perMinute > MaxPerMinute {
		return Quotas{}, errs.Invalid("a quota is 0 (none) to %d a minute, not %d", MaxPerMinute, perMinute)
	}
	var out Quotas
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		v, _, err := s.adminAtRoot(ctx)
		if err != nil {
			return err
		}
		if keyID != "" {
			if _, err := s.keyIn(ctx, v.caller.TenantID, keyID); err != nil {
				return err
			}
		}
		if err := s.repo.QuotaSet(ctx, v.caller.TenantID, keyID, perMinute, s.now().UTC(), v.caller.KeyID); err != nil {
			return fmt.Errorf("set quota: %w", err)
		}
		payload := map[string]any{"writes_per_minute": perMinute}
		subject := map[string]any{"tenant_id": v.caller.TenantID}
		if keyID != "" {
			payload = map[string]any{"requests_per_minute": perMinute}
			subject = map[string]any{"key_id": keyID}
		}
		if err := s.record(ctx, v.caller.TenantID, journal.Event{Type: "quota.set", Actor: v.caller.KeyID, Subject: subject, Payload: payload}); err != nil {
			return err
		}
		out, err = s.repo.QuotasOf(ctx, v.caller.TenantID)
		return err
	})
	if err == nil && s.limiter != nil {
		if c, ok := auth.From(ctx); ok {
			s.limiter.forget(c.TenantID)
		}
	}
	return out, err
}

// GetQuotas returns the tenant's quotas (admin or operator on universe).
func (s *Service) GetQuotas(ctx context.Context) (Quotas, error) {
	v, _, err := s.adminAtRoot(ctx)
	if err != nil {
		return Quotas{}, err
	}
	return s.repo.QuotasOf(ctx, v.caller.TenantID)
}

// Limiter enforces quotas on one replica: each limit L a minute becomes a
// token bucket of L/N a minute (N replicas, OML_REPLICAS) holding up to
// L/N tokens, so N replicas together admit about L a minute and a burst of
// about L. A tenant's settings are read at most once per refresh interval
// per replica (and at once after this replica changed them).
type Limiter struct {
	load     func(ctx context.Context, tenant string) (Quotas, error)
	replicas float64
	refresh  time.Duration
	now      func() time.Time

	mu      sync.Mutex
	tenants map[string]*tenantLimits
}

type tenantLimits struct {
	loaded time.Time
	q      Quotas
	writes *bucket
	keys   map[string]*bucket
}

// bucket is one limit's share on this replica: capacity tokens, refilled
// at rate tokens a second.
type bucket struct {
	perMinute      int
	capacity, rate float64
	tokens         float64
	at             time.Time
}

// NewLimiter returns the replica's limiter for the service's tenants.
func (s *Service) NewLimiter(replicas int, refresh time.Duration) *Limiter {
	l := &Limiter{
		load:     s.repo.QuotasOf,
		replicas: float64(max(replicas, 1)),
		refresh:  refresh,
		now:      s.now,
		tenants:  map[string]*tenantLimits{},
	}
	s.limiter = l
	return l
}

// Request takes one of the caller's key's requests a minute.
func (l *Limiter) Request(ctx context.Context, c auth.Caller) error {
	t, err := l.limits(ctx, c.TenantID)
	if err != nil || t == nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	per := t.q.Keys[c.KeyID]
	if per == 0 {
		return nil
	}
	b := t.keys[c.KeyID]
	if b == nil || b.perMinute != per {
		b = l.full(per)
		t.keys[c.KeyID] = b
	}
	if wait, ok := l.take(b); !ok {
		return errs.Retry(errs.LimitRate, ruleRate, wait, "key %s may make %d requests a minute (%d on this replica); retry in %d s",
			c.KeyID, per, l.share(per), seconds(wait))
	}
	return nil
}

// Write takes one of the caller's tenant's writes a minute. Admin and
// operator keys administer the tenant, its quota included, and are not
// counted: an exhausted quota never locks out the key that would lift it.
func (l *Limiter) Write(ctx context.Context, c auth.Caller) error {
	if c.Role == string(domain.RoleAdmin) || c.Role == string(domain.RoleOperator) {
		return nil
	}
	t, err := l.limits(ctx, c.TenantID)
	if err != nil || t == nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	per := t.q.WritesPerMinute
	if per == 0 {
		return nil
	}
	if t.writes == nil || t.writes.perMinute != per {
		t.writes = l.full(per)
	}
	if wait, ok := l.take(t.writes); !ok {
		return errs.Retry(errs.LimitQuota, ruleQuota, wait, "this tenant may make %d writes a minute (%d on this replica); retry in %d s",
			per, l.share(per), seconds(wait))
	}
	return nil
}

// forget drops a tenant's cached settings (they changed here).
func (l *Limiter) forget(tenant string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.tenants[tenant]; t != nil {
		t.loaded = time.Time{}
	}
}

// limits returns a tenant's settings, read again once they are older than
// the refresh interval; nil when the tenant has none.
func (l *Limiter) limits(ctx context.Context, tenant string) (*tenantLimits, error) {
	now := l.now()
	l.mu.Lock()
	t := l.tenants[tenant]
	fresh := t != nil && now.Sub(t.loaded) < l.refresh
	l.mu.Unlock()
	if !fresh {
		q, err := l.load(ctx, tenant)
		if err != nil {
			return nil, fmt.Errorf("load quotas: %w", err)
		}
		l.mu.Lock()
		if t = l.tenants[tenant]; t == nil {
			t = &tenantLimits{keys: map[string]*bucket{}}
			l.tenants[tenant] = t
		}
		t.q, t.loaded = q, now
		l.mu.Unlock()
	}
	// Callers read t's fields under l.mu; the settings are replaced, never
	// changed in place.
	l.mu.Lock()
	none := t.q.WritesPerMinute == 0 && len(t.q.Keys) == 0
	l.mu.Unlock()
	if none {
		return nil, nil
	}
	return t, nil
}

// share is a limit's part on this replica, in whole requests (at least 1).
func (l *Limiter) share(per int) int { return max(1, int(math.Round(float64(per)/l.replicas))) }

func (l *Limiter) full(per int) *bucket {
	share := float64(per) / l.replicas
	c := math.Max(1, share)
	return &bucket{perMinute: per, capacity: c, rate: share / 60, tokens: c, at: l.now()}
}

// take refills b for the time since it was last used and takes a token;
// when there is none it says how long until there is.
func (l *Limiter) take(b *bucket) (time.Duration, bool) { return b.take(l.now()) }

// take is Limiter.take at now (enrolment's per-peer buckets use it too).
func (b *bucket) take(now time.Time) (time.Duration, bool) {
	b.tokens = math.Min(b.capacity, b.tokens+now.Sub(b.at).Seconds()*b.rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) / b.rate * float64(time.Second)), false
}

func seconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }
