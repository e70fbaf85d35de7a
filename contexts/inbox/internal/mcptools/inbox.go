package mcptools

import (
	"context"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/wire"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/transport"
)

func registerInbox(t *transport.Tools, svc *app.Service, idem idempotency.Doer) {
	transport.Add(t, transport.ToolSpec{
		Name:  "feed_read",
		Title: "Read a workarea's feed",
		Description: "Read a workarea's feed: signals, questions, answers, approvals and the journal events you may see there. " +
			"With no since it polls forward from your own stored cursor and advances it, so a restarted agent resumes where " +
			"it stopped; an explicit since is honoured and advances it too; before pages back, newest first, and moves nothing. " +
			"Filter by kind or session. Cursors are journal seqs: next_since to poll on, next_before to page back.",
	}, func(ctx context.Context, in wire.FeedIn) (wire.FeedOut, error) {
		p, err := svc.Feed(ctx, in.Query())
		if err != nil {
			return wire.FeedOut{}, err
		}
		return wire.ToFeedOut(p), nil
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "signal_append",
		Title: "Append to a workarea's feed",
		Description: "Append an event to a workarea's feed: kind signal, finished, idea, or approval (an approval lands in " +
			"the human's inbox and may carry expires_in_seconds, 60–2592000, with on_expiry approve or decline; decline " +
			"when absent). A deadline on any other kind is refused. A workarea's feed is capped (OML_EVENTS_PER_WORKAREA). " +
			"Coordination only: oml_recall never returns it; knowledge goes through oml_remember.",
	}, func(ctx context.Context, in wire.SignalIn) (wire.SignalOut, error) {
		return wire.AppendSignal(ctx, svc, idem, in)
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "question_post",
		Title: "Ask the human",
		Description: "Ask the human a question about a workarea: it lands in the inbox and the feed and returns its id " +
			"(event_id = question_id = thread_id). options suggests 2–6 one-line answers (≤ 80 characters, no duplicates). " +
			"expires_in_seconds (60–2592000) closes it unanswered at the deadline; a question takes no on_expiry. You may " +
			"leave at most OML_INBOX_OPEN_MAX items open per workarea. Read the answer with inbox_read.",
	}, func(ctx context.Context, in wire.QuestionIn) (wire.QuestionOut, error) {
		return wire.PostQuestion(ctx, svc, idem, in)
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "answer_post",
		Title: "Answer a question",
		Description: "Answer a question by its question_id (needs writer on its workarea; the asker cannot answer itself). " +
			"The answer lands in the feed and closes the question; an answered question refuses another answer. " +
			"Approvals are decided by an admin over HTTP, never here.",
	}, func(ctx context.Context, in wire.AnswerIn) (wire.Item, error) {
		return wire.PostAnswer(ctx, svc, idem, in, false)
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "inbox_wait",
		Title: "Wait for the inbox",
		Description: "Wait up to wait_seconds (30 by default, 60 at most) for one of your own inbox items to be answered, " +
			"decided or resolved at its deadline, or for a new one, after since; returns as soon as something lands " +
			"(across every replica), with next_since to wait on from. wait_seconds 0 reads once. Same filters as inbox_read.",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.InboxWaitIn) (wire.InboxOut, error) {
		p, err := svc.InboxWait(ctx, in.Query(), in.Wait(), true)
		if err != nil {
			return wire.InboxOut{}, err
		}
		return wire.ToInboxOut(p), nil
	})
	transport.Add(t, transport.ToolSpec{
		Name:  "inbox_read",
		Title: "Read the inbox",
		Description: "Read the inbox items (questions and approvals) in the workareas you may read, optionally by workarea, " +
			"status or asker, from a since cursor; pass next_since back to read on. A resolved question carries answer, " +
			"a decided approval decision; one the hub resolved at its deadline carries expired: true with by \"hub\".",
		ReadOnly: true, Idempotent: true,
	}, func(ctx context.Context, in wire.InboxIn) (wire.InboxOut, error) {
		p, err := svc.Inbox(ctx, in.Query())
		if err != nil {
			return wire.InboxOut{}, err
		}
		return wire.ToInboxOut(p), nil
	})
}
