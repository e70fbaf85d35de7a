package app_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// fakeJournal holds one tenant's events, seq 1…n.
type fakeJournal struct{ events []journal.Stored }

func (j *fakeJournal) Head(context.Context, string) (int64, error) { return int64(len(j.events)), nil }

func (j *fakeJournal) After(_ context.Context, _ string, seq int64, limit int) ([]journal.Stored, error) {
	if seq >= int64(len(j.events)) {
		return nil, nil
	}
	return j.events[seq:min(int(seq)+limit, len(j.events))], nil
}

func (j *fakeJournal) InWorkarea(_ context.Context, _ string, workarea string, after, before int64, limit int, newestFirst bool) ([]journal.Stored, error) {
	var out []journal.Stored
	for _, e := range j.events {
		if e.Workarea == workarea && e.Seq > after && (before <= 0 || e.Seq < before) {
			out = append(out, e)
		}
	}
	if newestFirst {
		slices.Reverse(out)
	}
	return out[:min(limit, len(out))], nil
}

func (j *fakeJournal) AppendSequenced(_ context.Context, _ string, e journal.Event) (journal.Sequenced, error) {
	seq := int64(len(j.events) + 1)
	payload, _ := json.Marshal(e.Payload)
	subject, _ := json.Marshal(e.Subject)
	at := time.Unix(0, 0).UTC()
	id := fmt.Sprintf("ev_%d", seq)
	j.events = append(j.events, journal.Stored{Seq: seq, ID: id, Type: e.Type, Actor: e.Actor, Workarea: e.Workarea, Payload: payload, Subject: subject, At: at})
	return journal.Sequenced{Seq: seq, ID: id, At: at}, nil
}

type oneScope struct{}

func (oneScope) Fence(context.Context) (scope.Fence, error) { return nil, nil }

func (oneScope) Workarea(context.Context, string) (app.Workarea, error) {
	return app.Workarea{ID: "wa_crew", IDPath: "u.crew", Reader: true}, nil
}

func (oneScope) WorkareasByIDs(_ context.Context, ids []string) (map[string]app.Workarea, error) {
	out := map[string]app.Workarea{}
	for _, id := range ids {
		if id == "wa_crew" {
			out[id] = app.Workarea{ID: id, IDPath: "u.crew", Reader: true}
		}
	}
	return out, nil
}

// A read scans at most domain.MaxScan events: past a long run of events
// the caller may not see it answers none, not idle, with the cursor to go
// on from; the next read finds the visible one.
func TestTailScanIsBounded(t *testing.T) {
	t.Parallel()
	j := &fakeJournal{}
	for i := range domain.MaxScan + 2000 {
		j.events = append(j.events, journal.Stored{Seq: int64(i + 1), Type: "submission.remember", Actor: "key_other", Workarea: "wa_crew"})
	}
	last := int64(len(j.events) + 1)
	j.events = append(j.events, journal.Stored{Seq: last, Type: "lifecycle.promote", Actor: "key_rev", Workarea: "wa_crew"})
	svc := &app.Service{Access: oneScope{}, Journal: j}
	ctx := auth.With(context.Background(), auth.Caller{TenantID: "tn", KeyID: "key_me", Role: "reader"})

	zero := int64(0)
	first, err := svc.Tail(ctx, domain.TailQuery{Scope: "crew", AfterSeq: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Events) != 0 || first.Idle || first.NextAfterSeq != domain.MaxScan {
		t.Fatalf("first read: %d events, idle %v, next %d", len(first.Events), first.Idle, first.NextAfterSeq)
	}
	second, err := svc.Tail(ctx, domain.TailQuery{Scope: "crew", AfterSeq: &first.NextAfterSeq})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Events) != 1 || second.Events[0].Seq != last || !second.Idle || second.NextAfterSeq != last {
		t.Fatalf("second read: %+v", second)
	}
	beyond := last + 1
	if _, err := svc.Tail(ctx, domain.TailQuery{Scope: "crew", AfterSeq: &beyond}); !errs.Is(err, errs.Validation) {
		t.Fatalf("after_seq beyond the head: %v", err)
	}
}
