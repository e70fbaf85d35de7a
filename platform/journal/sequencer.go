package journal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/omlhub/oml/platform/canonjson"
	"github.com/omlhub/oml/platform/internal/dbsqlc"
	"github.com/omlhub/oml/platform/metrics"
	"github.com/omlhub/oml/platform/pg"
)

// head is the link a tenant's chain ends at.
type head struct {
	Seq  int64
	Hash []byte
}

// state is what one unit of work knows of the chains it writes to.
type state struct {
	holds    map[string]*head // tenants whose head this transaction has locked: where their chain ends now
	buffered []record         // events appended, written as the unit of work commits (flush), in order
	hooked   bool             // flush is registered
}

// take removes and returns tenant's buffered events, in order.
func (st *state) take(tenant string) []record {
	var mine []record
	rest := st.buffered[:0]
	for _, r := range st.buffered {
		if r.TenantID == tenant {
			mine = append(mine, r)
		} else {
			rest = append(rest, r)
		}
	}
	st.buffered = rest
	return mine
}

type stateKey struct{}

func txState(ctx context.Context) *state {
	return pg.TxLocal(ctx, stateKey{}, func() *state {
		return &state{holds: map[string]*head{}}
	})
}

// lockHead locks tenant's head row in the caller's transaction (creating
// it at the genesis link first) and returns where the chain ends.
func (j *Journal) lockHead(ctx context.Context, tenant string) (head, error) {
	conn := j.db.Conn(ctx)
	row, err := j.q.JournalHeadLock(ctx, conn, tenant)
	if pg.IsNoRows(err) {
		if err := j.q.JournalHeadInit(ctx, conn, dbsqlc.JournalHeadInitParams{TenantID: tenant, Hash: genesis}); err != nil {
			return head{}, fmt.Errorf("journal: init head: %w", err)
		}
		row, err = j.q.JournalHeadLock(ctx, conn, tenant)
	}
	if err != nil {
		return head{}, fmt.Errorf("journal: lock head: %w", err)
	}
	return head{Seq: row.Seq, Hash: row.Hash}, nil
}

// tryHead locks tenant's head in the caller's transaction unless another
// transaction holds it (ok false then, and when the tenant has no head
// yet), and reports whether events are pending.
func (j *Journal) tryHead(ctx context.Context, tenant string) (h head, ok, pending bool, err error) {
	row, err := j.q.JournalHeadTryLock(ctx, j.db.Conn(ctx), tenant)
	if pg.IsNoRows(err) {
		return head{}, false, false, nil
	}
	if err != nil {
		return head{}, false, false, fmt.Errorf("journal: try the head's lock: %w", err)
	}
	return head{Seq: row.Seq, Hash: row.Hash}, true, row.Pending, nil
}

// batch is a run of events to chain after a head, in order.
type batch struct {
	head head // where the chain ends after the events added so far
	p    dbsqlc.JournalEventsInsertParams
}

// add gives rec the next seq and its hash.
func (b *batch) add(rec record) error {
	rec.Seq = b.head.Seq + 1
	hash, err := rec.hash(b.head.Hash)
	if err != nil {
		return err
	}
	p := &b.p
	p.Seqs = append(p.Seqs, rec.Seq)
	p.EventIds = append(p.EventIds, rec.EventID)
	p.EventTypes = append(p.EventTypes, rec.Type)
	p.Ats = append(p.Ats, rec.At)
	p.Actors = append(p.Actors, rec.Actor)
	p.WorkareaIds = append(p.WorkareaIds, rec.Workarea) // "" is stored as NULL
	p.Subjects = append(p.Subjects, string(rec.Subject))
	p.Payloads = append(p.Payloads, string(rec.Payload))
	p.PrevHashes = append(p.PrevHashes, b.head.Hash)
	p.Hashes = append(p.Hashes, hash)
	b.head = head{Seq: rec.Seq, Hash: hash}
	return nil
}

// insert writes the batch's events and moves the head to its end, in the
// caller's transaction (which holds the head's lock).
func (j *Journal) insert(ctx context.Context, tenant string, b batch) error {
	if len(b.p.Seqs) == 0 {
		return nil
	}
	b.p.TenantID, b.p.HeadSeq, b.p.HeadHash = tenant, b.head.Seq, b.head.Hash
	// The insert goes in the pipeline of the unit of work's next
	// statement, in order (DB.Later): the next page of pending events, the
	// next tenant's head, or, for the last insert of a flush or of a
	// sequencer pass, the COMMIT.
	if err := j.q.JournalEventsInsert(ctx, j.db.Later(ctx, "journal: insert events"), b.p); err != nil {
		return fmt.Errorf("journal: insert events: %w", err)
	}
	return nil
}

// takePage bounds the pending events one statement moves.
const takePage = 500

// chainPending chains every pending event of tenant the caller's
// transaction sees, oldest first, after h; the caller holds the head's
// lock. It returns the new end of the chain.
func (j *Journal) chainPending(ctx context.Context, tenant string, h head) (head, error) {
	conn := j.db.Conn(ctx)
	for {
		rows, err := j.q.JournalPendingTake(ctx, conn, dbsqlc.JournalPendingTakeParams{TenantID: tenant, MaxRows: takePage})
		if err != nil {
			return h, fmt.Errorf("journal: take pending events: %w", err)
		}
		slices.SortFunc(rows, func(a, b dbsqlc.JournalPendingTakeRow) int { return cmp.Compare(a.ID, b.ID) })
		b := batch{head: h}
		for _, r := range rows {
			rec := record{TenantID: tenant, EventID: r.EventID, Type: r.EventType, At: r.At.UTC(), Actor: r.Actor}
			if r.WorkareaID != nil {
				rec.Workarea = *r.WorkareaID
			}
			// Hash the canonical form of what jsonb gives back, as Verify
			// will.
			if rec.Subject, err = canonjson.Canonicalize(r.Subject); err != nil {
				return h, fmt.Errorf("journal: pending event %s: subject: %w", r.EventID, err)
			}
			if rec.Payload, err = canonjson.Canonicalize(r.Payload); err != nil {
				return h, fmt.Errorf("journal: pending event %s: payload: %w", r.EventID, err)
			}
			if err := b.add(rec); err != nil {
				return h, err
			}
		}
		if err := j.insert(ctx, tenant, b); err != nil {
			return h, err
		}
		h = b.head
		if len(rows) < takePage {
			return h, nil
		}
	}
}

// passTimeout bounds one pass of the sequencer.
const passTimeout = 30 * time.Second

// pass chains tenant's pending events in a transaction of its own: one
// lock of the head for every transaction that committed events before it.
// It returns how many it chained.
func (j *Journal) pass(ctx context.Context, tenant string) (n int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("journal: sequencer panic: %v", p)
		}
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		metrics.JournalPasses.WithLabelValues(outcome).Inc()
	}()
	err = j.db.InTx(ctx, func(ctx context.Context) error {
		// Nothing pending in sight: the events this pass was asked for
		// were chained by a transaction that has committed. Rows being
		// moved by one still open are in sight, and the lock waits for it.
		row, err := j.q.JournalHeadLockIfPending(ctx, j.db.Conn(ctx), tenant)
		var start head
		switch {
		case err == nil:
			start = head{Seq: row.Seq, Hash: row.Hash}
		case !pg.IsNoRows(err):
			return fmt.Errorf("journal: lock head: %w", err)
		default: // nothing pending, or a tenant's first events
			some, err := j.q.JournalPendingExists(ctx, j.db.Conn(ctx), tenant)
			if err != nil || !some {
				return err
			}
			if start, err = j.lockHead(ctx, tenant); err != nil {
				return err
			}
		}
		end, err := j.chainPending(ctx, tenant, start)
		n = end.Seq - start.Seq
		return err
	})
	if err != nil {
		return 0, err
	}
	metrics.JournalChained.Add(float64(n))
	return n, nil
}

// sequencer runs at most one pass per tenant at a time in this process.
// Callers that commit while a pass runs wait for the next one, which
// chains all their events at once (group commit).
type sequencer struct {
	j       *Journal
	mu      sync.Mutex
	tenants map[string]*waiters // tenants with a pass running
}

type waiters struct{ next []chan struct{} }

// busy reports whether a pass over tenant's chain is running or awaited.
func (s *sequencer) busy(tenant string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, running := s.tenants[tenant]
	return running
}

// await returns once a pass of tenant's chain that began after the call
// has ended. A failed pass is logged; its events stay pending for the
// next write to the tenant or the sweep.
func (s *sequencer) await(tenant string) {
	done := make(chan struct{})
	s.mu.Lock()
	if s.tenants == nil {
		s.tenants = map[string]*waiters{}
	}
	w, running := s.tenants[tenant]
	if !running {
		w = &waiters{}
		s.tenants[tenant] = w
	}
	w.next = append(w.next, done)
	s.mu.Unlock()
	if !running {
		go s.run(tenant, w)
	}
	<-done
}

// run passes over tenant's chain while callers wait for it. The tenant
// stops counting as busy before the last group is released, so a write
// its waiters make next can chain in place rather than pending.
func (s *sequencer) run(tenant string, w *waiters) {
	s.mu.Lock()
	group := w.next
	w.next = nil
	s.mu.Unlock()
	for len(group) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), passTimeout)
		if _, err := s.j.pass(ctx, tenant); err != nil {
			slog.Error("journal: chaining pending events failed; the sweep retries", "tenant", tenant, "error", err)
		}
		cancel()
		s.mu.Lock()
		next := w.next
		w.next = nil
		if len(next) == 0 {
			delete(s.tenants, tenant)
		}
		s.mu.Unlock()
		for _, done := range group {
			close(done)
		}
		group = next
	}
}

// Sweep chains the pending events of up to limit tenants, those waiting
// longest first: events a process left when it died between a commit and
// its pass, or whose pass failed. A tenant whose pass fails does not stop
// the others. It returns how many tenants it passed over and how many
// events it chained.
func (j *Journal) Sweep(ctx context.Context, limit int) (tenants int, chained int64, err error) {
	ts, err := j.q.JournalPendingTenants(ctx, j.db.Pool, int32(limit))
	if err != nil {
		return 0, 0, fmt.Errorf("journal: list pending tenants: %w", err)
	}
	var errs []error
	for _, t := range ts {
		pctx, cancel := context.WithTimeout(ctx, passTimeout)
		n, err := j.pass(pctx, t)
		cancel()
		chained += n
		if err != nil {
			errs = append(errs, fmt.Errorf("tenant %s: %w", t, err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return len(ts), chained, errors.Join(errs...)
}
