package wire

import (
	"context"

	"github.com/omlhub/oml/contexts/inbox/internal/app"
	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/platform/idempotency"
)

// PostQuestion is question_post: one unit of work with its idempotency
// record (operation event:question).
func PostQuestion(ctx context.Context, svc *app.Service, idem idempotency.Doer, in QuestionIn) (QuestionOut, error) {
	key := in.IdempotencyKey
	in.IdempotencyKey = ""
	// Validate before resolving anything, so a refusal is the same for
	// every workarea and writes nothing.
	if _, _, err := in.Ask().Check(); err != nil {
		return QuestionOut{}, err
	}
	wid, err := svc.ResolveWorkarea(ctx, in.Workarea)
	if err != nil {
		return QuestionOut{}, err
	}
	return Once(ctx, idem, wid, "event:question", key, in, func(ctx context.Context) (QuestionOut, error) {
		it, err := svc.Post(ctx, in.Ask())
		return ToQuestionOut(it), err
	})
}

// AppendSignal is signal_append (operation event:signal); kind approval
// opens an inbox item.
func AppendSignal(ctx context.Context, svc *app.Service, idem idempotency.Doer, in SignalIn) (SignalOut, error) {
	key := in.IdempotencyKey
	in.IdempotencyKey = ""
	wid, err := svc.ResolveWorkarea(ctx, in.Workarea)
	if err != nil {
		return SignalOut{}, err
	}
	return Once(ctx, idem, wid, "event:signal", key, in, func(ctx context.Context) (SignalOut, error) {
		if in.Kind == string(domain.KindApproval) {
			it, err := svc.Post(ctx, app.Ask{Workarea: in.Workarea, Kind: domain.KindApproval, Body: in.Body,
				ExpiresIn: in.ExpiresInSeconds, OnExpiry: in.OnExpiry, Session: in.Session})
			return SignalOut{EventID: it.ID, Seq: it.Seq, Kind: in.Kind, Workarea: it.WorkareaID, At: it.CreatedAt,
				ApprovalID: it.ID, ExpiresAt: it.ExpiresAt, OnExpiry: it.OnExpiry}, err
		}
		p, err := svc.AppendSignal(ctx, app.Signal{Workarea: in.Workarea, Kind: in.Kind, Body: in.Body, Session: in.Session,
			ExpiresIn: in.ExpiresInSeconds, OnExpiry: in.OnExpiry})
		return SignalOut{EventID: p.EventID, Seq: p.Seq, Kind: p.Kind, Workarea: p.Workarea, At: p.At}, err
	})
}

// PostAnswer answers a question (operation answer:<question id>); human
// is the HTTP inbox's admin answer, otherwise answer_post.
func PostAnswer(ctx context.Context, svc *app.Service, idem idempotency.Doer, in AnswerIn, human bool) (Item, error) {
	key := in.IdempotencyKey
	in.IdempotencyKey = ""
	wid, err := svc.ItemWorkarea(ctx, in.QuestionID)
	if err != nil {
		return Item{}, err
	}
	return Once(ctx, idem, wid, "answer:"+in.QuestionID, key, in, func(ctx context.Context) (Item, error) {
		it, err := svc.Answer(ctx, in.QuestionID, in.Body, human)
		return ToItem(it), err
	})
}

// DecideIn is the body of POST /v1/inbox/{id}/decide.
type DecideIn struct {
	Decision string `json:"decision"`
	Note     string `json:"note,omitempty"`
	// Role and Grants decide an enrolment request's approval: the
	// enrolled key's role and its grants.
	Role           string       `json:"role,omitempty"`
	Grants         []EnrolGrant `json:"grants,omitempty"`
	IdempotencyKey string       `json:"idempotency_key,omitempty"`
}

// EnrolGrant is one grant of an enrolment's approval.
type EnrolGrant struct {
	Workarea string `json:"workarea"`
	Scope    string `json:"scope"`
}

// Decide records an admin's decision (operation decision:<id>).
func Decide(ctx context.Context, svc *app.Service, idem idempotency.Doer, id string, in DecideIn) (Item, error) {
	key := in.IdempotencyKey
	in.IdempotencyKey = ""
	wid, err := svc.ItemWorkarea(ctx, id)
	if err != nil {
		return Item{}, err
	}
	return Once(ctx, idem, wid, "decision:"+id, key, in, func(ctx context.Context) (Item, error) {
		var grants []app.EnrolGrant
		for _, g := range in.Grants {
			grants = append(grants, app.EnrolGrant{Workarea: g.Workarea, Scope: g.Scope})
		}
		it, err := svc.DecideWith(ctx, id, in.Decision, in.Note, in.Role, grants)
		return ToItem(it), err
	})
}
