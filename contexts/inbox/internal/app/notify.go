package app

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

// SubscribeCmd is one notify_subscribe.
type SubscribeCmd struct {
	Kinds    []string
	Workarea string // "" every workarea the caller reads at drain time
	Actor    string
	DropOwn  bool
}

// principalOf is what notification cursors are keyed on: the resolved
// actor, never the key (a key without a principal stands for itself).
func principalOf(c auth.Caller) string { return cmp.Or(c.PrincipalID, c.KeyID) }

// Subscribe registers a subscription whose cursor starts at the journal's
// head, so nothing from before it is reported.
func (s *Service) Subscribe(ctx context.Context, cmd SubscribeCmd) (domain.Subscription, error) {
	c, err := auth.ContentCaller(ctx, "notifications")
	if err != nil {
		return domain.Subscription{}, err
	}
	kinds, err := domain.CheckKinds(cmd.Kinds)
	if err != nil {
		return domain.Subscription{}, err
	}
	sub := domain.Subscription{TenantID: c.TenantID, ID: ids.New(ids.Subscription), PrincipalID: principalOf(c),
		Kinds: kinds, Actor: cmd.Actor, DropOwn: cmd.DropOwn, CreatedAt: s.now()}
	if cmd.Workarea != "" {
		w, err := s.readable(ctx, cmd.Workarea)
		if err != nil {
			return domain.Subscription{}, err
		}
		sub.WorkareaID, sub.IDPath = w.ID, w.IDPath
	}
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		// The principal's attention cursor serialises its subscribes (and
		// its drains), so the cap holds under concurrent calls.
		if _, err := s.Notices.AttentionLock(ctx, c.TenantID, sub.PrincipalID, sub.CreatedAt); err != nil {
			return err
		}
		have, err := s.Notices.Subscriptions(ctx, c.TenantID, sub.PrincipalID, true)
		if err != nil {
			return err
		}
		if len(have) >= domain.MaxSubscriptions {
			return errs.New(errs.LimitCeiling, "a principal holds a bounded number of subscriptions",
				"%d subscriptions held, at most %d: notify_unsubscribe one first", len(have), domain.MaxSubscriptions)
		}
		head, err := s.Journal.Head(ctx, c.TenantID)
		if err != nil {
			return err
		}
		sub.Seq = head
		if err := s.Notices.SubscriptionInsert(ctx, sub); err != nil {
			return err
		}
		// A subscriber is no longer quiet: every replica forgets it.
		if s.Wakes != nil {
			return s.Wakes.Notify(ctx, c.TenantID)
		}
		return nil
	})
	if err != nil {
		return domain.Subscription{}, fmt.Errorf("subscribe: %w", err)
	}
	return sub, nil
}

// Unsubscribe removes one of the caller's own subscriptions; another
// principal's answers as a missing one.
func (s *Service) Unsubscribe(ctx context.Context, id string) error {
	c, err := auth.ContentCaller(ctx, "notifications")
	if err != nil {
		return err
	}
	if id == "" {
		return errs.Invalid("subscription_id is required")
	}
	ok, err := s.Notices.SubscriptionDelete(ctx, c.TenantID, principalOf(c), id)
	if err != nil {
		return fmt.Errorf("unsubscribe: %w", err)
	}
	if !ok {
		return errs.New(errs.NotFound, "a subscription is its owner's: unknown and another's are indistinguishable",
			"no subscription %s of yours", id)
	}
	return nil
}

// Subscriptions lists the caller's own subscriptions.
func (s *Service) Subscriptions(ctx context.Context) ([]domain.Subscription, error) {
	c, err := auth.ContentCaller(ctx, "notifications")
	if err != nil {
		return nil, err
	}
	subs, err := s.Notices.Subscriptions(ctx, c.TenantID, principalOf(c), false)
	if err != nil {
		return nil, fmt.Errorf("list subscriptions: %w", err)
	}
	return subs, nil
}

// Drain returns what is pending for the caller and marks it delivered:
// resolutions of its own items above its attention cursor, and events its
// subscriptions match that it may read (domain.Visible). With nothing
// pending it costs one read and writes nothing; a caller that is no
// content key (an operator, none at all) gets nothing.
func (s *Service) Drain(ctx context.Context) ([]domain.Pending, error) {
	ps, _, err := s.DrainQuiet(ctx)
	return ps, err
}

// DrainQuiet is Drain that also reports whether the caller is quiet:
// nothing pending for its attention and no subscription. Only an inbox
// write can end that (a resolution of its items, a subscription it
// makes), so a caller may be remembered quiet until the next such write.
func (s *Service) DrainQuiet(ctx context.Context) ([]domain.Pending, bool, error) {
	c, ok := auth.From(ctx)
	if !ok || c.Role == "operator" || s.Notices == nil {
		return nil, false, nil
	}
	principal := principalOf(c)
	attention, subscribed, err := s.Notices.Probe(ctx, c.TenantID, principal)
	if err != nil || (!attention && !subscribed) {
		return nil, err == nil, err
	}
	var out []domain.Pending
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		out = nil
		if attention {
			if out, err = s.drainAttention(ctx, c.TenantID, principal); err != nil {
				return err
			}
		}
		if subscribed && len(out) < domain.MaxPending {
			return s.drainSubscriptions(ctx, c, &out)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("drain notifications: %w", err)
	}
	return out, false, nil
}

func (s *Service) drainAttention(ctx context.Context, tenant, principal string) ([]domain.Pending, error) {
	now := s.now()
	cursor, err := s.Notices.AttentionLock(ctx, tenant, principal, now)
	if err != nil {
		return nil, err
	}
	items, err := s.Notices.ResolvedFor(ctx, tenant, principal, cursor, domain.MaxPending)
	if err != nil || len(items) == 0 {
		return nil, err
	}
	// Cursors are the principal's, grants the key's: this key is nudged
	// only about items in workareas it reads now (a denied key of the
	// principal never sees the answer's text); the item stays in the inbox.
	var ids []string
	for _, it := range items {
		ids = append(ids, it.WorkareaID)
	}
	ws, err := s.Access.WorkareasByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []domain.Pending
	for _, it := range items {
		if ws[it.WorkareaID].Reader {
			out = append(out, domain.AttentionNotice(it))
		}
	}
	return out, s.Notices.AttentionSet(ctx, tenant, principal, items[len(items)-1].Seq, now)
}

// drainSubscriptions walks the journal after the oldest subscription
// cursor. Each subscription consumes, in order, every event: it delivers
// those it matches that the caller may read now (the tail's rule, in a
// workarea the key reads) and passes the rest. Seed 002 would hold a
// matching event the caller cannot read above the cursor until a grant
// arrives; one that never becomes readable (another writer's held
// submission, a denied subtree) would then stall the subscription for
// good, so OML consumes it: feed_read still reads such an event once it is
// readable.
func (s *Service) drainSubscriptions(ctx context.Context, c auth.Caller, out *[]domain.Pending) error {
	subs, err := s.Notices.Subscriptions(ctx, c.TenantID, principalOf(c), true)
	if err != nil || len(subs) == 0 {
		return err
	}
	fence, err := s.Access.Fence(ctx)
	if err != nil {
		return err
	}
	from := slices.MinFunc(subs, func(a, b domain.Subscription) int { return cmp.Compare(a.Seq, b.Seq) }).Seq
	batch, err := s.Journal.After(ctx, c.TenantID, from, domain.ScanPage)
	if err != nil || len(batch) == 0 {
		return err
	}
	ws, err := s.Access.WorkareasByIDs(ctx, workareasOf(batch))
	if err != nil {
		return err
	}
	me := domain.Me{KeyID: c.KeyID, Principal: c.Principal}
	for _, sub := range subs {
		seq := sub.Seq
		for _, e := range batch {
			if e.Seq <= seq {
				continue
			}
			if len(*out) >= domain.MaxPending {
				break
			}
			d := eventOf(e)
			w, known := ws[e.Workarea]
			if known && w.Reader && e.Workarea != "" && !domain.WorkingState(e.Type) && sub.Matches(d, w.IDPath, me) && domain.Visible(d, c.KeyID, true, fence) {
				*out = append(*out, domain.EventNotice(d, e.ID, e.At))
			}
			seq = e.Seq
		}
		if seq != sub.Seq {
			if err := s.Notices.SubscriptionCursorSet(ctx, c.TenantID, sub.ID, seq); err != nil {
				return err
			}
		}
	}
	return nil
}

func workareasOf(batch []journal.Stored) []string {
	var out []string
	for _, e := range batch {
		if e.Workarea != "" && !slices.Contains(out, e.Workarea) {
			out = append(out, e.Workarea)
		}
	}
	return out
}

// NotifyWait waits up to wait for something to be pending for the caller
// and drains it: as soon as a drain finds something, or when wait has
// passed with nothing. wait 0 drains once.
func (s *Service) NotifyWait(ctx context.Context, wait time.Duration) ([]domain.Pending, error) {
	if _, err := auth.ContentCaller(ctx, "notifications"); err != nil {
		return nil, err
	}
	if wait < 0 || wait > MaxWait {
		return nil, errs.Invalid("wait_seconds must be 0–%d", int(MaxWait/time.Second))
	}
	return waitFor(ctx, s.Wakes, "notify_wait", wait, func() ([]domain.Pending, bool, error) {
		out, err := s.Drain(ctx)
		return out, len(out) > 0, err
	})
}
