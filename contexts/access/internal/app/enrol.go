package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/omlhub/oml/contexts/access/internal/domain"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/textsafe"
)

// Enrolment is one self-service request to join the tenant open to
// enrolment (issue 15, seed 002).
type Enrolment struct {
	TenantID  string
	ID        string
	Selector  []byte
	Verifier  []byte
	Reason    string
	Peer      string
	Status    string // pending | approved | refused
	CreatedAt time.Time
	ExpiresAt time.Time // abandoned after, when still pending
	DecidedAt *time.Time
	Note      string
	KeyID     string
	ItemID    string
}

// Enrolments is the enrolments' storage; every call runs in the caller's
// unit of work.
type Enrolments interface {
	TenantByName(ctx context.Context, name string) (string, error)
	Insert(ctx context.Context, e Enrolment) error
	SetItem(ctx context.Context, tenant, id, item string) error
	BySelector(ctx context.Context, selector []byte) (Enrolment, error)
	ForUpdate(ctx context.Context, tenant, id string) (Enrolment, error)
	Decide(ctx context.Context, e Enrolment, by string) error
	// Pending locks the tenant's enrolments until the unit of work ends
	// and counts its requests pending at now.
	Pending(ctx context.Context, tenant string, now time.Time) (int64, error)
	// Abandon deletes up to limit requests still pending at their expiry.
	Abandon(ctx context.Context, now time.Time, limit int) (int, error)
}

// EnrolInbox is the inbox as enrolment needs it: a request lands in the
// admins' inbox as an enrol_request item, open until the deadline.
type EnrolInbox interface {
	EnrolRequest(ctx context.Context, tenant, rootWorkarea, rootIDPath, enrolment, reason, peer string, at, deadline time.Time) (string, error)
}

// EnrolConfig is the deployment's enrolment: the tenant open to it (""
// closes it), the bounds on pending requests, the rate per peer.
type EnrolConfig struct {
	Tenant     string
	PendingMax int
	PendingTTL time.Duration
	PerHour    int
}

// Enroller runs enrolment.
type Enroller struct {
	svc   *Service
	store Enrolments
	inbox EnrolInbox
	cfg   EnrolConfig

	mu     sync.Mutex
	peers  map[string]*bucket
	pruned time.Time
}

// maxPeers bounds the peer buckets a replica keeps; past it, once the
// full ones are forgotten, new peers are refused (fail closed).
const maxPeers = 100_000

// NewEnroller returns the enroller.
func NewEnroller(svc *Service, store Enrolments, inbox EnrolInbox, cfg EnrolConfig) *Enroller {
	if cfg.PendingMax <= 0 {
		cfg.PendingMax = 100
	}
	if cfg.PendingTTL <= 0 {
		cfg.PendingTTL = 24 * time.Hour
	}
	if cfg.PerHour <= 0 {
		cfg.PerHour = 10
	}
	return &Enroller{svc: svc, store: store, inbox: inbox, cfg: cfg, peers: map[string]*bucket{}}
}

// The rules enrolment refusals name.
const (
	ruleEnrolClosed  = "self-service enrolment is open only where the deployment names a tenant for it (OML_ENROL_TENANT)"
	ruleEnrolRate    = "enrolment is rate-limited by the socket peer (seed 002)"
	ruleEnrolPending = "a hub holding its maximum of pending requests refuses more (OML_ENROL_PENDING_MAX)"
	ruleEnrolDecided = "an enrolment request is decided once, before it is abandoned (OML_ENROL_PENDING_TTL)"
	ruleEnrolRole    = "an enrolled agent gets an agent's role: reader, writer or dreamer"
)

// Enrolled is a new request and its pending token, shown once.
type Enrolled struct {
	RequestID string
	Token     string
	ExpiresAt time.Time
}

// CheckReason validates a request's reason: one line, 1–199 characters,
// no control characters.
func CheckReason(reason string) error {
	switch {
	case strings.TrimSpace(reason) == "":
		return errs.Invalid("reason is required: one line saying who you are and why you ask")
	case !utf8.ValidString(reason):
		return errs.Invalid("reason: not valid UTF-8")
	case utf8.RuneCountInString(reason) >= 200:
		return errs.Invalid("reason: under 200 characters, got %d", utf8.RuneCountInString(reason))
	case strings.ContainsFunc(reason, unicode.IsControl):
		return errs.Invalid("reason: one line, no control characters")
	}
	return nil
}

// Enrol records a request from peer: a pending token (refused everywhere
// until approved) and an enrol_request item in the admins' inbox, in one
// unit of work. The peer's rate is checked first.
func (e *Enroller) Enrol(ctx context.Context, reason, peer string) (Enrolled, error) {
	if e.cfg.Tenant == "" {
		return Enrolled{}, errs.New(errs.NotFound, ruleEnrolClosed, "this deployment is not open to self-service enrolment")
	}
	if err := CheckReason(reason); err != nil {
		return Enrolled{}, err
	}
	if err := e.takePeer(peer); err != nil {
		return Enrolled{}, err
	}
	tok, err := domain.NewToken()
	if err != nil {
		return Enrolled{}, fmt.Errorf("mint token: %w", err)
	}
	now := e.svc.now().UTC().Truncate(time.Microsecond)
	en := Enrolment{ID: ids.New(ids.Enrolment), Selector: tok.Selector, Verifier: tok.Verifier, Reason: reason, Peer: peer,
		Status: "pending", CreatedAt: now, ExpiresAt: now.Add(e.cfg.PendingTTL)}
	err = e.svc.tx.InTx(ctx, func(ctx context.Context) error {
		tenant, err := e.store.TenantByName(ctx, e.cfg.Tenant)
		if errors.Is(err, ErrNotFound) {
			return errs.New(errs.NotFound, ruleEnrolClosed, "this deployment is not open to self-service enrolment")
		}
		if err != nil {
			return fmt.Errorf("enrolment tenant: %w", err)
		}
		en.TenantID = tenant
		n, err := e.store.Pending(ctx, tenant, now)
		if err != nil {
			return fmt.Errorf("count pending enrolments: %w", err)
		}
		if n >= int64(e.cfg.PendingMax) {
			return errs.Retry(errs.LimitCeiling, ruleEnrolPending, time.Minute, "%d enrolment requests are pending; ask again later", n)
		}
		if err := e.store.Insert(ctx, en); err != nil {
			return fmt.Errorf("insert enrolment: %w", err)
		}
		root, err := e.svc.repo.WorkareaByPath(ctx, tenant, domain.RootName)
		if errors.Is(err, ErrNotFound) {
			return errs.New(errs.NotFound, ruleEnrolClosed, "this deployment is not open to self-service enrolment")
		}
		if err != nil {
			return fmt.Errorf("root workarea: %w", err)
		}
		item, err := e.inbox.EnrolRequest(ctx, tenant, root.ID, root.IDPath, en.ID, reason, peer, now, en.ExpiresAt)
		if err != nil {
			return err
		}
		return e.store.SetItem(ctx, tenant, en.ID, item)
	})
	return Enrolled{RequestID: en.ID, Token: tok.Plain, ExpiresAt: en.ExpiresAt}, err
}

// takePeer takes one of peer's requests: PerHour an hour, on this replica
// (a token bucket, as the quotas'). Past maxPeers buckets, once the full
// ones are forgotten (at most once a minute), new peers are refused.
func (e *Enroller) takePeer(peer string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.svc.now()
	capacity := float64(e.cfg.PerHour)
	b := e.peers[peer]
	if b == nil {
		if len(e.peers) >= maxPeers && now.Sub(e.pruned) > time.Minute {
			e.pruned = now
			for p, x := range e.peers {
				if x.tokens+now.Sub(x.at).Seconds()*x.rate >= capacity {
					delete(e.peers, p)
				}
			}
		}
		if len(e.peers) >= maxPeers {
			return errs.Retry(errs.LimitRate, ruleEnrolRate, time.Minute, "too many addresses are asking at once; retry in 60 s")
		}
		b = &bucket{capacity: capacity, rate: capacity / 3600, tokens: capacity, at: now}
		e.peers[peer] = b
	}
	if wait, ok := b.take(now); !ok {
		return errs.Retry(errs.LimitRate, ruleEnrolRate, wait, "this address may ask %d times an hour; retry in %d s", e.cfg.PerHour, seconds(wait))
	}
	return nil
}

// EnrolStatus is where a request stands, for its pending token.
type EnrolStatus struct {
	RequestID string
	Status    string // pending | approved | refused
	KeyID     string
	Note      string
}

// Status reads the request the token was issued for. An unknown or
// malformed token, and one whose request was abandoned, answer exactly as
// an invalid key does.
func (e *Enroller) Status(ctx context.Context, token string) (EnrolStatus, error) {
	if e.cfg.Tenant == "" {
		return EnrolStatus{}, errs.New(errs.NotFound, ruleEnrolClosed, "this deployment is not open to self-service enrolment")
	}
	selector, verifier, ok := domain.ParseToken(token)
	if !ok {
		return EnrolStatus{}, badKey()
	}
	en, err := e.store.BySelector(ctx, selector)
	if errors.Is(err, ErrNotFound) {
		return EnrolStatus{}, badKey()
	}
	if err != nil {
		return EnrolStatus{}, fmt.Errorf("look up enrolment: %w", err)
	}
	if !domain.VerifierMatches(en.Verifier, verifier) {
		return EnrolStatus{}, badKey()
	}
	if en.Status == "pending" && !e.svc.now().Before(en.ExpiresAt) {
		return EnrolStatus{}, badKey()
	}
	return EnrolStatus{RequestID: en.ID, Status: en.Status, KeyID: en.KeyID, Note: en.Note}, nil
}

// GrantSpec is one grant an approval gives the new key.
type GrantSpec struct {
	Workarea string
	Scope    string
}

// Decide admits or refuses a pending request, in the caller's unit of work
// (the inbox's decision on the enrol_request item): an approval makes the
// request's token a working key of a new principal named after the request
// (enr_…), with role
// and grants given as the deciding admin would give them; a refusal ends
// it. The caller must administer the tenant.
func (e *Enroller) Decide(ctx context.Context, enrolment string, approve bool, role string, grants []GrantSpec, note string) error {
	v, _, err := e.svc.adminAtRoot(ctx)
	if err != nil {
		return err
	}
	c := v.caller
	if !ids.Has(ids.Enrolment, enrolment) {
		return errs.New(errs.NotFound, ruleEffective, "no enrolment request with that id")
	}
	var r domain.Role
	if approve {
		var ok bool
		if r, ok = domain.ParseRole(role); !ok || (r != domain.RoleReader && r != domain.RoleWriter && r != domain.RoleDreamer) {
			return errs.New(errs.Validation, ruleEnrolRole, "role %q: an approval names reader, writer or dreamer", textsafe.Clip(role, 64))
		}
		if len(grants) > 20 {
			return errs.Invalid("grants: at most 20, got %d", len(grants))
		}
	} else if role != "" || len(grants) > 0 {
		return errs.Invalid("a refusal takes no role and no grants")
	}
	en, err := e.store.ForUpdate(ctx, c.TenantID, enrolment)
	if errors.Is(err, ErrNotFound) {
		return errs.New(errs.NotFound, ruleEnrolDecided, "no pending enrolment request with that id (decided, abandoned or unknown)")
	}
	if err != nil {
		return fmt.Errorf("load enrolment: %w", err)
	}
	now := e.svc.now().UTC().Truncate(time.Microsecond)
	if en.Status != "pending" {
		return errs.New(errs.InboxConflict, ruleEnrolDecided, "enrolment request %s is %s", en.ID, en.Status)
	}
	if !now.Before(en.ExpiresAt) {
		return errs.New(errs.InboxConflict, ruleEnrolDecided, "enrolment request %s was abandoned at %s", en.ID, en.ExpiresAt.UTC().Format(time.RFC3339))
	}
	en.DecidedAt, en.Note = &now, note
	if !approve {
		en.Status = "refused"
		if err := e.store.Decide(ctx, en, c.KeyID); err != nil {
			return fmt.Errorf("refuse enrolment: %w", err)
		}
		return e.svc.record(ctx, c.TenantID, journal.Event{Type: "enrol.refuse", Actor: c.KeyID,
			Subject: map[string]any{"enrolment_id": en.ID}, Payload: map[string]any{"note": note}})
	}
	// A new identity of its own: the request's whole id names it, and a
	// principal of that name made some other way is never joined (its
	// keys and history would become the enrolled agent's, R2).
	name := strings.ToLower(en.ID)
	if _, err := e.svc.repo.PrincipalByName(ctx, c.TenantID, name); err == nil {
		return errs.New(errs.InboxConflict, ruleEnrolDecided, "a principal named %s exists already; refuse this request", name)
	} else if !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("look up principal: %w", err)
	}
	p, err := e.svc.repo.PrincipalEnsure(ctx, c.TenantID, name)
	if err != nil {
		return fmt.Errorf("ensure principal: %w", err)
	}
	k := Key{ID: ids.New(ids.Key), Principal: p, Role: r, CreatedAt: now}
	if err := e.svc.repo.KeyCreate(ctx, c.TenantID, k, en.Selector, en.Verifier, c.KeyID); err != nil {
		return fmt.Errorf("create key: %w", err)
	}
	if err := e.svc.record(ctx, c.TenantID, journal.Event{
		Type: "key.issue", Actor: c.KeyID, Subject: map[string]any{"key_id": k.ID},
		Payload: map[string]any{"principal": p.Name, "principal_id": p.ID, "role": r, "enrolment_id": en.ID},
	}); err != nil {
		return err
	}
	for i, g := range grants {
		if _, err := e.svc.AddGrant(ctx, AddGrant{KeyID: k.ID, Workarea: g.Workarea, Scope: g.Scope, Effect: "allow"}); err != nil {
			if x := errs.From(err); x != nil && x.Code != errs.Internal {
				return errs.New(x.Code, x.Rule, "grants[%d]: %s", i, x.Message)
			}
			return err
		}
	}
	en.Status, en.KeyID = "approved", k.ID
	if err := e.store.Decide(ctx, en, c.KeyID); err != nil {
		return fmt.Errorf("approve enrolment: %w", err)
	}
	return e.svc.record(ctx, c.TenantID, journal.Event{Type: "enrol.approve", Actor: c.KeyID,
		Subject: map[string]any{"enrolment_id": en.ID}, Payload: map[string]any{"key_id": k.ID, "role": r, "grants": len(grants), "note": note}})
}

// Sweep removes requests pending past the TTL, on any replica.
func (e *Enroller) Sweep(ctx context.Context, limit int) (int, error) {
	var n int
	err := e.svc.tx.InTx(ctx, func(ctx context.Context) error {
		var err error
		n, err = e.store.Abandon(ctx, e.svc.now(), limit)
		return err
	})
	return n, err
}
