package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omlhub/oml/contexts/inbox/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
)

const ruleRead = "effective access (D7); unknown and out-of-scope are indistinguishable"

func notFound(what string) error {
	return errs.New(errs.NotFound, ruleRead, "no %s with that reference readable by this key", what)
}

// readable resolves a workarea the caller reads; anything else is
// access.not_found, exactly as a missing one.
func (s *Service) readable(ctx context.Context, ref string) (Workarea, error) {
	if ref == "" {
		return Workarea{}, errs.Invalid("workarea is required: an id or a path")
	}
	w, err := s.Access.Workarea(ctx, ref)
	if errs.Is(err, errs.NotFound) || (err == nil && !w.Reader) {
		return Workarea{}, notFound("workarea")
	}
	return w, err
}

// writable resolves a workarea the caller writes in.
func (s *Service) writable(ctx context.Context, ref string) (Workarea, error) {
	w, err := s.readable(ctx, ref)
	if err != nil {
		return w, err
	}
	if !w.Writer {
		return w, errs.New(errs.Denied, "coordination writes need writer on the workarea (D7)", "this key does not hold writer on workarea %s", w.ID)
	}
	if w.Status == "validated" {
		return w, errs.New(errs.Frozen, "status ladder: a validated workarea refuses new writes (D8)", "workarea %s is validated", w.ID)
	}
	return w, nil
}

// ResolveWorkarea returns the id of a workarea the caller reads (for
// idempotency scopes).
func (s *Service) ResolveWorkarea(ctx context.Context, ref string) (string, error) {
	w, err := s.readable(ctx, ref)
	return w.ID, err
}

// countEvent charges one feed event to the workarea against its ceiling.
func (s *Service) countEvent(ctx context.Context, tenant, workarea string) error {
	n, err := s.Repo.CountEvent(ctx, tenant, workarea)
	if err != nil {
		return fmt.Errorf("count feed event: %w", err)
	}
	if s.Limits.EventsPerWorkarea > 0 && n > s.Limits.EventsPerWorkarea {
		return errs.New(errs.LimitCeiling, "a workarea's feed holds at most OML_EVENTS_PER_WORKAREA events",
			"workarea %s has reached its ceiling of %d feed events (OML_EVENTS_PER_WORKAREA)", workarea, s.Limits.EventsPerWorkarea)
	}
	return nil
}

// checkOpenCap refuses an item past the asker's open-items cap.
func (s *Service) checkOpenCap(ctx context.Context, c auth.Caller, workarea string) error {
	n, err := s.Repo.OpenCount(ctx, c.TenantID, c.PrincipalID, workarea)
	if err != nil {
		return fmt.Errorf("count open items: %w", err)
	}
	if s.Limits.OpenMax > 0 && n >= s.Limits.OpenMax {
		return errs.Retry(errs.LimitRate, "an identity leaves at most OML_INBOX_OPEN_MAX items open on the human per workarea; resolving one frees its slot",
			time.Minute, "%d items of yours are open in workarea %s (cap %d, OML_INBOX_OPEN_MAX)", n, workarea, s.Limits.OpenMax)
	}
	return nil
}

// Ask is a question_post, or a signal_append of kind approval.
type Ask struct {
	Workarea  string
	Kind      domain.Kind
	Body      string
	Options   []string
	ExpiresIn *int64
	OnExpiry  string
	Session   string
}

// Check validates an ask before anything is read or written.
func (a Ask) Check() (domain.Deadline, []string, error) {
	if err := domain.CheckBody("body", a.Body); err != nil {
		return domain.Deadline{}, nil, err
	}
	opts, err := domain.CheckOptions(a.Options)
	if err != nil {
		return domain.Deadline{}, nil, err
	}
	if a.Kind == domain.KindApproval && a.Options != nil {
		return domain.Deadline{}, nil, errs.Invalid("options: only a question offers options")
	}
	d, err := domain.NewDeadline(a.Kind, a.ExpiresIn, a.OnExpiry)
	return d, opts, err
}

// Post records a question or an approval: the journal event (the item's
// id), the inbox item, the feed count, in the caller's unit of work.
func (s *Service) Post(ctx context.Context, a Ask) (domain.Item, error) {
	c, err := auth.ContentCaller(ctx, "inbox writes")
	if err != nil {
		return domain.Item{}, err
	}
	d, opts, err := a.Check()
	if err != nil {
		return domain.Item{}, err
	}
	w, err := s.writable(ctx, a.Workarea)
	if err != nil {
		return domain.Item{}, err
	}
	if err := s.checkOpenCap(ctx, c, w.ID); err != nil {
		return domain.Item{}, err
	}
	if err := s.countEvent(ctx, c.TenantID, w.ID); err != nil {
		return domain.Item{}, err
	}
	now := s.now()
	it := domain.Item{
		TenantID: c.TenantID, Kind: a.Kind, WorkareaID: w.ID, IDPath: w.IDPath,
		AskerKeyID: c.KeyID, AskerPrincipalID: c.PrincipalID, AskerPrincipal: c.Principal,
		Body: a.Body, Options: opts, CreatedAt: now, OnExpiry: d.OnExpiry, Status: domain.Open,
	}
	payload := map[string]any{"body": a.Body, "principal": c.Principal}
	if opts != nil {
		payload["options"] = opts
	}
	if a.Session != "" {
		payload["session"] = a.Session
	}
	if d.After > 0 {
		at := now.Add(d.After)
		it.ExpiresAt = &at
		payload["expires_at"] = at
		if d.OnExpiry != "" {
			payload["on_expiry"] = d.OnExpiry
		}
	}
	ev, err := s.append(ctx, c.TenantID, journal.Event{
		Type: domain.FeedPrefix + string(a.Kind), Actor: c.KeyID, Workarea: w.ID, Payload: payload,
	})
	if err != nil {
		return domain.Item{}, err
	}
	if err := s.searchable(ctx, c.TenantID, ev, w.ID, w.IDPath, string(a.Kind), c.Principal, a.Body); err != nil {
		return domain.Item{}, err
	}
	it.ID, it.Seq, it.CreatedAt = ev.ID, ev.Seq, ev.At
	if it.ExpiresAt != nil {
		at := ev.At.Add(d.After)
		it.ExpiresAt = &at
	}
	if err := s.Repo.ItemInsert(ctx, it); err != nil {
		return domain.Item{}, fmt.Errorf("insert inbox item: %w", err)
	}
	return it, nil
}

// Signal is a signal_append of a kind other than approval.
type Signal struct {
	Workarea  string
	Kind      string
	Body      string
	Session   string
	ExpiresIn *int64
	OnExpiry  string
}

// Posted is where a signal landed.
type Posted struct {
	EventID  string
	Seq      int64
	Kind     string
	Workarea string
	At       time.Time
}

// AppendSignal records a feed event of kind signal, finished or idea.
func (s *Service) AppendSignal(ctx context.Context, sig Signal) (Posted, error) {
	c, err := auth.ContentCaller(ctx, "feed writes")
	if err != nil {
		return Posted{}, err
	}
	if err := domain.CheckSignalKind(sig.Kind); err != nil {
		return Posted{}, err
	}
	if _, err := domain.NewDeadline("", sig.ExpiresIn, sig.OnExpiry); err != nil {
		return Posted{}, err
	}
	if err := domain.CheckBody("body", sig.Body); err != nil {
		return Posted{}, err
	}
	w, err := s.writable(ctx, sig.Workarea)
	if err != nil {
		return Posted{}, err
	}
	if err := s.countEvent(ctx, c.TenantID, w.ID); err != nil {
		return Posted{}, err
	}
	payload := map[string]any{"body": sig.Body, "principal": c.Principal}
	if sig.Session != "" {
		payload["session"] = sig.Session
	}
	ev, err := s.append(ctx, c.TenantID, journal.Event{
		Type: domain.FeedPrefix + sig.Kind, Actor: c.KeyID, Workarea: w.ID, Payload: payload,
	})
	if err != nil {
		return Posted{}, err
	}
	if err := s.searchable(ctx, c.TenantID, ev, w.ID, w.IDPath, sig.Kind, c.Principal, sig.Body); err != nil {
		return Posted{}, err
	}
	return Posted{EventID: ev.ID, Seq: ev.Seq, Kind: sig.Kind, Workarea: w.ID, At: ev.At}, nil
}

// item reads an item the caller may see (reader on its workarea); others
// are access.not_found, as missing ones.
func (s *Service) item(ctx context.Context, tenant, id string, lock bool) (domain.Item, Workarea, error) {
	get := s.Repo.ItemGet
	if lock {
		get = s.Repo.ItemGetForUpdate
	}
	it, err := get(ctx, tenant, id)
	if errors.Is(err, ErrNotFound) {
		return it, Workarea{}, notFound("inbox item")
	}
	if err != nil {
		return it, Workarea{}, fmt.Errorf("read inbox item: %w", err)
	}
	w, err := s.Access.Workarea(ctx, it.WorkareaID)
	if errs.Is(err, errs.NotFound) || (err == nil && !it.ShownTo(w.Reader, w.Admin)) {
		return it, w, notFound("inbox item")
	}
	return it, w, err
}

// ItemWorkarea returns the workarea id of an item the caller may see (for
// idempotency scopes).
func (s *Service) ItemWorkarea(ctx context.Context, id string) (string, error) {
	c, err := auth.ContentCaller(ctx, "inbox reads")
	if err != nil {
		return "", err
	}
	it, _, err := s.item(ctx, c.TenantID, id, false)
	return it.WorkareaID, err
}

// Answer answers a question. human is the HTTP inbox (admin on the
// workarea); otherwise answer_post (writer, not the asker).
func (s *Service) Answer(ctx context.Context, id, body string, human bool) (domain.Item, error) {
	c, err := auth.ContentCaller(ctx, "inbox answers")
	if err != nil {
		return domain.Item{}, err
	}
	if err := domain.CheckBody("body", body); err != nil {
		return domain.Item{}, err
	}
	it, w, err := s.item(ctx, c.TenantID, id, true)
	if err != nil {
		return it, err
	}
	if human {
		if !w.Admin {
			return it, errs.New(errs.Denied, "the human's inbox is answered by an admin of the workarea", "this key does not hold admin on workarea %s", w.ID)
		}
		if it.Kind != domain.KindQuestion {
			return it, errs.Invalid("%s is an approval: decide it (POST /v1/inbox/{id}/decide)", it.ID)
		}
		if err := notTheAsker(it, c.PrincipalID); err != nil {
			return it, err
		}
		if err := it.CanDecideOrAnswerOpen(s.now()); err != nil {
			return it, err
		}
	} else {
		if !w.Writer {
			return it, errs.New(errs.Denied, "answer_post needs writer on the question's workarea (D7)", "this key does not hold writer on workarea %s", w.ID)
		}
		if err := it.CanAnswer(c.PrincipalID, s.now()); err != nil {
			return it, err
		}
		if err := s.countEvent(ctx, c.TenantID, w.ID); err != nil {
			return it, err
		}
	}
	return s.resolve(ctx, it, c.KeyID, c.Principal, domain.Answered, body, false)
}

// Decide records an admin's decision on an approval (HTTP only, R1).
func (s *Service) Decide(ctx context.Context, id, decision, note string) (domain.Item, error) {
	return s.DecideWith(ctx, id, decision, note, "", nil)
}

// DecideWith is Decide with what an enrolment request's approval gives the
// enrolled key: its role and grants (refused on any other item). The
// enrolment is admitted or refused in the decision's unit of work.
func (s *Service) DecideWith(ctx context.Context, id, decision, note, role string, grants []EnrolGrant) (domain.Item, error) {
	c, err := auth.ContentCaller(ctx, "inbox decisions")
	if err != nil {
		return domain.Item{}, err
	}
	st, err := domain.Decision(decision)
	if err != nil {
		return domain.Item{}, err
	}
	if len(note) > domain.MaxBody {
		return domain.Item{}, domain.CheckBody("note", note)
	}
	it, w, err := s.item(ctx, c.TenantID, id, true)
	if err != nil {
		return it, err
	}
	if !w.Admin {
		return it, errs.New(errs.Denied, "an approval is decided by an admin of its workarea", "this key does not hold admin on workarea %s", w.ID)
	}
	if err := notTheAsker(it, c.PrincipalID); err != nil {
		return it, err
	}
	if err := it.CanDecide(s.now()); err != nil {
		return it, err
	}
	if it.Kind == domain.KindEnrolRequest {
		if err := s.Enrolments.Decide(ctx, it.AskerKeyID, st == domain.Approved, role, grants, note); err != nil {
			return it, err
		}
	} else if role != "" || grants != nil {
		return it, errs.Invalid("role and grants decide an enrolment request; %s is an %s", it.ID, it.Kind)
	}
	return s.resolve(ctx, it, c.KeyID, c.Principal, st, note, false)
}

// notTheAsker refuses the asker's own answer or decision through the
// human's inbox: an identity that did not ask resolves an item (R2's
// spirit; an agent whose key also holds admin cannot approve itself).
func notTheAsker(it domain.Item, principalID string) error {
	if it.AskerPrincipalID == principalID {
		return errs.New(errs.Denied, "an inbox item is resolved by an identity other than its asker (R2)",
			"%s %s was posted by this key's principal; another admin of the workarea resolves it", it.Kind, it.ID)
	}
	return nil
}

// resolve closes an open, locked item: the answer event on its thread and
// the item's new state, in one unit of work.
func (s *Service) resolve(ctx context.Context, it domain.Item, actorKey, by string, st domain.Status, body string, expired bool) (domain.Item, error) {
	payload := map[string]any{"body": body, "principal": by}
	typ := domain.FeedPrefix + "answer"
	if it.Kind == domain.KindEnrolRequest {
		// Administration, not coordination: not in anyone's feed.
		typ = "enrol.decide"
	}
	if it.Kind == domain.KindApproval || it.Kind == domain.KindEnrolRequest {
		payload["decision"] = string(st)
		payload["note"] = body
		delete(payload, "body")
	}
	if expired {
		payload["expired"] = true
		if it.Kind == domain.KindQuestion {
			delete(payload, "body")
		}
	}
	ev, err := s.append(ctx, it.TenantID, journal.Event{
		Type: typ, Actor: actorKey, Workarea: it.WorkareaID,
		Subject: map[string]any{"question_id": it.ID, "kind": string(it.Kind)}, Payload: payload,
	})
	if err != nil {
		return it, err
	}
	if b, _ := payload["body"].(string); typ == domain.FeedPrefix+"answer" && b != "" {
		if err := s.searchable(ctx, it.TenantID, ev, it.WorkareaID, it.IDPath, "answer", by, b); err != nil {
			return it, err
		}
	}
	it.Status, it.ResolvedBy, it.ResolutionBody, it.Expired = st, by, body, expired
	it.AnswerEventID, it.Seq = ev.ID, ev.Seq
	at := ev.At
	it.ResolvedAt = &at
	ok, err := s.Repo.ItemResolve(ctx, it)
	if err != nil {
		return it, fmt.Errorf("resolve inbox item: %w", err)
	}
	if !ok {
		return it, errs.New(errs.InboxConflict, domain.RuleResolved, "%s %s is already resolved", it.Kind, it.ID)
	}
	return it, nil
}

// Sweep resolves up to limit open items past their deadline as the hub,
// each in its own unit of work with its answer event; tenant "" sweeps
// every tenant. Items are claimed with SKIP LOCKED, so replicas sweeping
// at once never resolve one twice. It returns how many it resolved.
func (s *Service) Sweep(ctx context.Context, tenant string, limit int) (int, error) {
	n := 0
	for n < limit {
		var done bool
		err := s.Tx.InTx(ctx, func(ctx context.Context) error {
			due, err := s.Repo.ItemsDue(ctx, tenant, s.now(), 1)
			if err != nil {
				return fmt.Errorf("claim due items: %w", err)
			}
			if len(due) == 0 {
				done = true
				return nil
			}
			it := due[0]
			_, err = s.resolve(ctx, it, domain.Hub, domain.Hub, it.ExpiryOutcome(), "", true)
			return err
		})
		if err != nil {
			return n, err
		}
		if done {
			return n, nil
		}
		n++
	}
	return n, nil
}

// settle resolves the tenant's due items before a read shows any as open.
func (s *Service) settle(ctx context.Context, tenant string) error {
	if s.Tx == nil {
		return nil
	}
	_, err := s.Sweep(ctx, tenant, 100)
	return err
}

// append records a feed event and wakes the waiters of every replica when
// its unit of work commits.
func (s *Service) append(ctx context.Context, tenant string, e journal.Event) (journal.Sequenced, error) {
	ev, err := s.Journal.AppendSequenced(ctx, tenant, e)
	if err != nil {
		return ev, err
	}
	if s.Wakes != nil {
		if err := s.Wakes.Notify(ctx, tenant); err != nil {
			return ev, fmt.Errorf("wake waiters: %w", err)
		}
	}
	return ev, nil
}

// searchable hands a coordination record to search (when wired).
func (s *Service) searchable(ctx context.Context, tenant string, ev journal.Sequenced, workarea, idPath, kind, actor, body string) error {
	if s.Search == nil || body == "" {
		return nil
	}
	if err := s.Search.IndexEvent(ctx, tenant, ev.ID, workarea, idPath, kind, actor, body, ev.At); err != nil {
		return fmt.Errorf("index for search: %w", err)
	}
	return nil
}

// EnrolRequest puts an enrolment request in the admins' inbox: an item of
// kind enrol_request in the tenant's root workarea, open until deadline
// (then declined, as an approval without an answer is), its journal event
// enrol.request (administration: in no feed). It runs in the enrolment's
// unit of work; the request has no key yet, so the item names the
// enrolment as its asker.
func (s *Service) EnrolRequest(ctx context.Context, tenant, root, rootIDPath, enrolment, reason, peer string, at, deadline time.Time) (domain.Item, error) {
	ev, err := s.append(ctx, tenant, journal.Event{
		Type: "enrol.request", Actor: enrolment, Workarea: root,
		Subject: map[string]any{"enrolment_id": enrolment}, Payload: map[string]any{"reason": reason, "peer": peer},
	})
	if err != nil {
		return domain.Item{}, err
	}
	exp := deadline
	it := domain.Item{
		TenantID: tenant, ID: ev.ID, Kind: domain.KindEnrolRequest, WorkareaID: root, IDPath: rootIDPath,
		AskerKeyID: enrolment, AskerPrincipal: "enrolling agent (" + peer + ")", Body: reason, CreatedAt: ev.At,
		ExpiresAt: &exp, OnExpiry: "decline", Status: domain.Open, Seq: ev.Seq,
	}
	if err := s.Repo.ItemInsert(ctx, it); err != nil {
		return domain.Item{}, fmt.Errorf("insert inbox item: %w", err)
	}
	return it, nil
}
