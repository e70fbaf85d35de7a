package app_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/scope"
)

// fakeNotices is app.Notices in memory for one tenant.
type fakeNotices struct {
	items     []domain.Item
	attention map[string]int64
	subs      []domain.Subscription
	probes    int
}

func (n *fakeNotices) Probe(_ context.Context, _, p string) (bool, bool, error) {
	n.probes++
	attention := slices.ContainsFunc(n.items, func(it domain.Item) bool {
		return it.AskerPrincipalID == p && it.Status != domain.Open && it.Seq > n.attention[p]
	})
	return attention, slices.ContainsFunc(n.subs, func(s domain.Subscription) bool { return s.PrincipalID == p }), nil
}

func (n *fakeNotices) AttentionLock(_ context.Context, _, p string, _ time.Time) (int64, error) {
	return n.attention[p], nil
}

func (n *fakeNotices) AttentionSet(_ context.Context, _, p string, seq int64, _ time.Time) error {
	n.attention[p] = seq
	return nil
}

func (n *fakeNotices) ResolvedFor(_ context.Context, _, p string, after int64, limit int) ([]domain.Item, error) {
	var out []domain.Item
	for _, it := range n.items {
		if it.AskerPrincipalID == p && it.Status != domain.Open && it.Seq > after && len(out) < limit {
			out = append(out, it)
		}
	}
	return out, nil
}

func (n *fakeNotices) SubscriptionInsert(_ context.Context, s domain.Subscription) error {
	n.subs = append(n.subs, s)
	return nil
}

func (n *fakeNotices) SubscriptionDelete(_ context.Context, _, p, id string) (bool, error) {
	i := slices.IndexFunc(n.subs, func(s domain.Subscription) bool { return s.ID == id && s.PrincipalID == p })
	if i < 0 {
		return false, nil
	}
	n.subs = slices.Delete(n.subs, i, i+1)
	return true, nil
}

func (n *fakeNotices) Subscriptions(_ context.Context, _, p string, _ bool) ([]domain.Subscription, error) {
	var out []domain.Subscription
	for _, s := range n.subs {
		if s.PrincipalID == p {
			out = append(out, s)
		}
	}
	return out, nil
}

func (n *fakeNotices) SubscriptionCursorSet(_ context.Context, _, id string, seq int64) error {
	for i := range n.subs {
		if n.subs[i].ID == id {
			n.subs[i].Seq = seq
		}
	}
	return nil
}

type inline struct{}

func (inline) InTx(ctx context.Context, fn func(context.Context) error) error { return fn(ctx) }

// grants reads wa_crew (u.crew) always and wa_secret only when open.
type grants struct{ secret *bool }

func (g grants) Fence(context.Context) (scope.Fence, error) { return nil, nil }

func (g grants) Workarea(_ context.Context, ref string) (app.Workarea, error) {
	if ref == "crew" || ref == "wa_crew" {
		return app.Workarea{ID: "wa_crew", IDPath: "u.crew", Reader: true, Writer: true}, nil
	}
	return app.Workarea{}, errs.New(errs.NotFound, "r", "no")
}

func (g grants) WorkareasByIDs(_ context.Context, ids []string) (map[string]app.Workarea, error) {
	out := map[string]app.Workarea{}
	for _, id := range ids {
		switch {
		case id == "wa_crew":
			out[id] = app.Workarea{ID: id, IDPath: "u.crew", Reader: true}
		case id == "wa_secret" && *g.secret:
			out[id] = app.Workarea{ID: id, IDPath: "u.secret", Reader: true}
		}
	}
	return out, nil
}

type notifyBundle struct {
	svc    *app.Service
	j      *fakeJournal
	n      *fakeNotices
	secret *bool
	me     context.Context
	other  context.Context
}

func setupNotify(t *testing.T) notifyBundle {
	t.Helper()
	secret := false
	b := notifyBundle{j: &fakeJournal{}, n: &fakeNotices{attention: map[string]int64{}}, secret: &secret}
	b.svc = &app.Service{Access: grants{&secret}, Journal: b.j, Notices: b.n, Tx: inline{}}
	b.me = auth.With(context.Background(), auth.Caller{TenantID: "tn", KeyID: "key_me", PrincipalID: "pr_me", Principal: "me", Role: "writer"})
	b.other = auth.With(context.Background(), auth.Caller{TenantID: "tn", KeyID: "key_b", PrincipalID: "pr_b", Principal: "bob", Role: "writer"})
	return b
}

func (b notifyBundle) event(typ, actor, workarea string) {
	_, _ = b.j.AppendSequenced(context.Background(), "tn", journal.Event{Type: typ, Actor: actor, Workarea: workarea, Payload: map[string]any{"body": "hi"}})
}

func TestAttentionDeliveredOnce(t *testing.T) {
	t.Parallel()
	b := setupNotify(t)
	if ps, err := b.svc.Drain(b.me); err != nil || len(ps) != 0 || len(b.n.attention) != 0 {
		t.Fatalf("nothing pending: %v %v", ps, err)
	}
	at := time.Unix(5, 0).UTC()
	b.n.items = []domain.Item{
		{ID: "evt_q1", Kind: domain.KindQuestion, AskerPrincipalID: "pr_me", Status: domain.Answered, AnswerEventID: "evt_a1", ResolvedAt: &at, Seq: 3, WorkareaID: "wa_crew"},
		{ID: "evt_q2", Kind: domain.KindQuestion, AskerPrincipalID: "pr_me", Status: domain.Open, Seq: 4, WorkareaID: "wa_crew"},
		{ID: "evt_q3", Kind: domain.KindQuestion, AskerPrincipalID: "pr_b", Status: domain.Answered, Seq: 5, WorkareaID: "wa_crew"},
		// answered in a workarea this key does not read: consumed, not shown
		{ID: "evt_q4", Kind: domain.KindQuestion, AskerPrincipalID: "pr_me", Status: domain.Answered, AnswerEventID: "evt_a4", ResolvedAt: &at, Seq: 6, WorkareaID: "wa_secret"},
	}
	ps, err := b.svc.Drain(b.me)
	if err != nil || len(ps) != 1 || ps[0].ID != "evt_a1" || ps[0].Source != domain.SourceAttention {
		t.Fatalf("first drain: %+v %v", ps, err)
	}
	if ps, _ := b.svc.Drain(b.me); len(ps) != 0 {
		t.Fatalf("second drain repeats: %+v", ps)
	}
	if b.n.attention["pr_me"] != 6 {
		t.Fatalf("attention cursor %d, want 6", b.n.attention["pr_me"])
	}
}

func TestSubscriptionDrain(t *testing.T) {
	t.Parallel()
	b := setupNotify(t)
	b.event("feed.signal", "key_b", "wa_crew") // before the subscription: never reported
	if _, err := b.svc.Subscribe(b.me, app.SubscribeCmd{}); !errs.Is(err, errs.Validation) {
		t.Fatalf("empty kinds: %v", err)
	}
	if _, err := b.svc.Subscribe(b.me, app.SubscribeCmd{Kinds: []string{"gossip"}}); !errs.Is(err, errs.Validation) {
		t.Fatalf("unknown kind: %v", err)
	}
	sub, err := b.svc.Subscribe(b.me, app.SubscribeCmd{Kinds: []string{"signal"}, DropOwn: true})
	if err != nil || sub.Seq != 1 {
		t.Fatalf("subscribe: %+v %v", sub, err)
	}
	b.event("feed.idea", "key_b", "wa_crew")           // another kind: consumed
	b.event("feed.signal", "key_me", "wa_crew")        // own, dropped
	b.event("submission.remember", "key_b", "wa_crew") // not a signal
	b.event("feed.signal", "key_b", "wa_crew")         // delivered (seq 5)
	b.event("feed.signal", "key_b", "wa_secret")       // unreadable: consumed, never shown (seq 6)
	b.event("feed.signal", "key_b", "wa_crew")         // not stalled behind it (seq 7)
	ps, err := b.svc.Drain(b.me)
	if err != nil || len(ps) != 2 || ps[0].ID != "ev_5" || ps[1].ID != "ev_7" || ps[0].Kind != "signal" || ps[0].Source != domain.SourceSubscription {
		t.Fatalf("first drain: %+v %v", ps, err)
	}
	if subs, _ := b.svc.Subscriptions(b.me); subs[0].Seq != 7 {
		t.Fatalf("cursor %d, want 7", subs[0].Seq)
	}
	if ps, _ := b.svc.Drain(b.me); len(ps) != 0 {
		t.Fatalf("repeat: %+v", ps)
	}
	*b.secret = true // a later grant does not replay what was consumed
	if ps, _ := b.svc.Drain(b.me); len(ps) != 0 {
		t.Fatalf("after the grant: %+v", ps)
	}
	if err := b.svc.Unsubscribe(b.other, sub.ID); !errs.Is(err, errs.NotFound) {
		t.Fatalf("another's unsubscribe: %v", err)
	}
	if err := b.svc.Unsubscribe(b.me, sub.ID); err != nil {
		t.Fatal(err)
	}
	b.n.probes = 0
	if ps, _ := b.svc.Drain(b.me); len(ps) != 0 || b.n.probes != 1 {
		t.Fatalf("no subscription: %+v, %d probes", ps, b.n.probes)
	}
}

func TestNotifyWaitPollsAndBounds(t *testing.T) {
	t.Parallel()
	b := setupNotify(t)
	if _, err := b.svc.NotifyWait(b.me, 61*time.Second); !errs.Is(err, errs.Validation) {
		t.Fatalf("61 s: %v", err)
	}
	if ps, err := b.svc.NotifyWait(b.me, 0); err != nil || len(ps) != 0 {
		t.Fatalf("poll: %v %v", ps, err)
	}
}

func TestSubscriptionCap(t *testing.T) {
	t.Parallel()
	b := setupNotify(t)
	for i := range domain.MaxSubscriptions {
		if _, err := b.svc.Subscribe(b.me, app.SubscribeCmd{Kinds: []string{"signal"}}); err != nil {
			t.Fatalf("subscription %d: %v", i, err)
		}
	}
	if _, err := b.svc.Subscribe(b.me, app.SubscribeCmd{Kinds: []string{"signal"}}); !errs.Is(err, errs.LimitCeiling) {
		t.Fatalf("past the cap: %v", err)
	}
	if len(b.n.subs) != domain.MaxSubscriptions {
		t.Fatalf("%d subscriptions stored", len(b.n.subs))
	}
	if _, err := b.svc.Subscribe(b.other, app.SubscribeCmd{Kinds: []string{"signal"}}); err != nil {
		t.Fatalf("another principal is not capped by mine: %v", err)
	}
}
