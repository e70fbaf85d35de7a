package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/wire"
	"github.com/omlhub/oml/platform/transport"
)

func registerNotify(t *transport.Tools, svc *app.Service) {
	transport.Add(t, transport.ToolSpec{
		Name:  "notify_subscribe",
		Title: "Subscribe to feed events",
		Description: "Register a standing interest in feed events by kind (signal, finished, question, answer, approval, " +
			"artifact, session, idea, system), optionally scoped to a workarea's subtree, narrowed to one actor, or with " +
			"your own events dropped; matching events you may read arrive once in the notifications trailer of your tool " +
			"results. An empty or unknown kind is refused. The cursor starts at the journal's head: nothing older is reported.",
	}, func(ctx context.Context, in wire.SubscribeIn) (wire.Subscription, error) {
		s, err := svc.Subscribe(ctx, in.Cmd())
		if err != nil {
			return wire.Subscription{}, err
		}
		return wire.ToSubscription(s), nil
	})
	transport.Add(t, transport.ToolSpec{
		Name:        "notify_unsubscribe",
		Title:       "Remove a subscription",
		Description: "Remove one of your own subscriptions by subscription_id. An unknown id, or another identity's, is not_found.",
		Idempotent:  true,
	}, func(ctx context.Context, in wire.UnsubscribeIn) (wire.UnsubscribeOut, error) {
		if err := svc.Unsubscribe(ctx, in.SubscriptionID); err != nil {
			return wire.UnsubscribeOut{}, err
		}
		return wire.UnsubscribeOut{SubscriptionID: in.SubscriptionID, Removed: true}, nil
	})
	transport.Add(t, transport.ToolSpec{
		Name:        "notify_list",
		Title:       "List your subscriptions",
		Description: "List your own subscriptions with their ids, kinds, scope and cursor.",
		ReadOnly:    true, Idempotent: true,
	}, func(ctx context.Context, _ struct{}) (wire.SubscriptionsOut, error) {
		subs, err := svc.Subscriptions(ctx)
		if err != nil {
			return wire.SubscriptionsOut{}, err
		}
		out := wire.SubscriptionsOut{Subscriptions: make([]wire.Subscription, len(subs))}
		for i, s := range subs {
			out.Subscriptions[i] = wire.ToSubscription(s)
		}
		return out, nil
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "notify_wait",
		Title: "Wait for notifications",
		Description: "Block until something is pending for you (an answer or decision on your own question or approval, " +
			"or an event one of your subscriptions matches) or wait_seconds passes (30 by default, 60 at most; 0 polls " +
			"once); returns the pending list of the notifications trailer, each item delivered once.",
	}, func(ctx context.Context, in wire.NotifyWaitIn) (wire.Notifications, error) {
		ps, err := svc.NotifyWait(ctx, in.Wait())
		if err != nil {
			return wire.Notifications{}, err
		}
		return wire.ToNotifications(ps), nil
	})
}
