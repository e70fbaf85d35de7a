// Package journal appends OML's per-tenant, hash-chained event journal (D1)
// in the caller's transaction and verifies the chain.
//
// Each event's hash is SHA-256(prev_hash ‖ canonical JSON of the event's
// fields); seq is gap-free per tenant. The chain's head is one row per
// tenant, and whoever extends the chain holds that row's lock until its
// transaction ends, so concurrent writers never fork the chain.
//
// Two ways in:
//
//   - [Journal.Append] keeps the event until the unit of work commits and
//     writes it then, as its last statements: after everything the unit
//     of work read or waited for, so the chain never puts an event before
//     one whose effects its unit of work saw. If no other transaction
//     holds the head, the unit of work takes it (SKIP LOCKED) and chains
//     in place, holding it only for the commit. Otherwise the event is
//     written pending and the sequencer chains it right after the commit,
//     in one short transaction with every other pending event of the
//     tenant (sequencer.go): one lock hold chains many units of work. The
//     event's seq is not known inside the transaction. Every context but
//     the inbox uses it.
//   - [Journal.AppendSequenced] takes the head's lock at once, chains the
//     tenant's pending events and the unit of work's earlier appends
//     first, then its own, and returns the seq: for callers that store it
//     (the inbox's feed positions). What such a unit of work waits for
//     after that is chained after it, so causal order holds for it only
//     up to that point.
package journal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/canonjson"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/internal/dbsqlc"
	"github.com/omlhub/oml/platform/metrics"
	"github.com/omlhub/oml/platform/pg"
)

// Event is what a context records. Subject names what changed (ids);
// Payload carries the details. Both must encode as JSON objects.
type Event struct {
	Type     string
	Actor    string // key id, or "system"
	Workarea string // optional workarea id
	Subject  map[string]any
	Payload  any
}

// Appended is an event written by [Journal.Append]: its id and time are
// fixed; its seq and hash are given right after the commit.
type Appended struct {
	ID string
	At time.Time
}

// Sequenced is where an event landed in the chain.
type Sequenced struct {
	Seq  int64
	ID   string
	At   time.Time
	Hash []byte
}

// Journal appends and verifies.
type Journal struct {
	db    *pg.DB
	q     *dbsqlc.Queries
	clock func() time.Time
	seq   sequencer
	inTx  atomic.Bool // every Append chains in its transaction
}

// ChainInTx makes every [Journal.Append] chain its event at once, as
// [Journal.AppendSequenced] does: how every write worked before the
// sequencer (migration 0041). Benchmarks set it to measure that
// path beside the sequencer's in the same run.
func (j *Journal) ChainInTx(on bool) { j.inTx.Store(on) }

// New returns a journal on db. clock may be nil (time.Now).
func New(db *pg.DB, clock func() time.Time) *Journal {
	if clock == nil {
		clock = time.Now
	}
	j := &Journal{db: db, q: dbsqlc.New(), clock: clock}
	j.seq.j = j
	return j
}

var genesis = make([]byte, sha256.Size)

// Append records e for tenant in the transaction carried by ctx. The
// event is written as the unit of work commits (pg.BeforeCommit), after
// everything it read or waited for, so the chain's order never puts an
// event before one whose effects its unit of work saw. Then, if no other
// transaction holds the tenant's head (nor is this process's sequencer
// chaining it), the unit of work takes the head and chains its events in
// place: the cheapest way without contention, the head held only for the
// commit. Otherwise they are written pending and chained right after the
// commit (before InTx returns), in one batch with other units of work's
// events of the tenant; if that pass fails or the process dies first, the
// next write to the tenant or the journal sweep chains them.
func (j *Journal) Append(ctx context.Context, tenant string, e Event) (Appended, error) {
	if err := pg.InTxRequired(ctx); err != nil {
		return Appended{}, err
	}
	rec, err := j.record(tenant, e)
	if err != nil {
		return Appended{}, err
	}
	st := txState(ctx)
	if j.inTx.Load() {
		if _, err := j.sequence(ctx, st, rec); err != nil {
			return Appended{}, err
		}
		return Appended{ID: rec.EventID, At: rec.At}, nil
	}
	if !st.hooked {
		if err := pg.BeforeCommit(ctx, func(ctx context.Context) error { return j.flush(ctx, st) }); err != nil {
			return Appended{}, err
		}
		st.hooked = true
	}
	st.buffered = append(st.buffered, rec)
	metrics.JournalAppends.Inc()
	return Appended{ID: rec.EventID, At: rec.At}, nil
}

// AppendSequenced records e for tenant in the transaction carried by ctx
// and chains it at once: the transaction holds the tenant's head until it
// ends. Pending events of the tenant (those committed by others and this
// unit of work's own earlier appends) are chained before it.
func (j *Journal) AppendSequenced(ctx context.Context, tenant string, e Event) (Sequenced, error) {
	if err := pg.InTxRequired(ctx); err != nil {
		return Sequenced{}, err
	}
	rec, err := j.record(tenant, e)
	if err != nil {
		return Sequenced{}, err
	}
	return j.sequence(ctx, txState(ctx), rec)
}

// sequence chains rec in the caller's transaction, taking the tenant's
// head if it does not hold it yet.
func (j *Journal) sequence(ctx context.Context, st *state, rec record) (Sequenced, error) {
	h := st.holds[rec.TenantID]
	if h == nil {
		start, err := j.lockHead(ctx, rec.TenantID)
		if err != nil {
			return Sequenced{}, err
		}
		h = &start
	}
	end, err := j.extend(ctx, rec.TenantID, *h, true, append(st.take(rec.TenantID), rec))
	if err != nil {
		return Sequenced{}, err
	}
	st.holds[rec.TenantID] = &end
	metrics.JournalAppends.Inc()
	return Sequenced{Seq: end.Seq, ID: rec.EventID, At: rec.At, Hash: end.Hash}, nil
}

// record is e as it will be hashed, without its seq yet.
func (j *Journal) record(tenant string, e Event) (record, error) {
	rec := record{
		TenantID: tenant,
		EventID:  ids.New(ids.Event),
		Type:     e.Type,
		// Postgres keeps microseconds; hash what will be read back.
		At:       j.clock().UTC().Truncate(time.Microsecond),
		Actor:    e.Actor,
		Workarea: e.Workarea,
	}
	var err error
	if rec.Subject, err = object(e.Subject); err != nil {
		return rec, fmt.Errorf("journal: subject: %w", err)
	}
	if rec.Payload, err = object(e.Payload); err != nil {
		return rec, fmt.Errorf("journal: payload: %w", err)
	}
	return rec, nil
}

// flush writes the unit of work's appended events as it commits, tenant by
// tenant: chained in place when the unit of work holds or can take the
// head (it never waits for one here), else pending for the sequencer.
func (j *Journal) flush(ctx context.Context, st *state) error {
	st.hooked = false // an Append from a later before-commit hook registers anew
	var tenants []string
	for _, r := range st.buffered {
		if !slices.Contains(tenants, r.TenantID) {
			tenants = append(tenants, r.TenantID)
		}
	}
	for _, tenant := range tenants {
		recs := st.take(tenant)
		h := st.holds[tenant]
		pending := true
		// While this process's sequencer is chaining the tenant, others
		// are writing to it too: go pending without asking for the head.
		if h == nil && !j.seq.busy(tenant) {
			start, ok, anyPending, err := j.tryHead(ctx, tenant)
			if err != nil {
				return err
			}
			if ok {
				h, pending = &start, anyPending
			}
		}
		if h != nil {
			end, err := j.extend(ctx, tenant, *h, pending, recs)
			if err != nil {
				return err
			}
			st.holds[tenant] = &end
			continue
		}
		if err := j.writePending(ctx, tenant, recs); err != nil {
			return err
		}
		pg.AfterCommit(ctx, func() { j.seq.await(tenant) })
	}
	return nil
}

// extend chains recs after h in the caller's transaction, which holds the
// tenant's head: first, when there may be any, the pending events other
// units of work committed before this point. It returns the new end.
func (j *Journal) extend(ctx context.Context, tenant string, h head, pending bool, recs []record) (head, error) {
	var err error
	if pending {
		if h, err = j.chainPending(ctx, tenant, h); err != nil {
			return h, err
		}
	}
	b := batch{head: h}
	for _, rec := range recs {
		if err := b.add(rec); err != nil {
			return h, err
		}
	}
	if err := j.insert(ctx, tenant, b); err != nil {
		return h, err
	}
	return b.head, nil
}

// writePending writes recs, all of one tenant, to the pending table in
// order, in one statement.
func (j *Journal) writePending(ctx context.Context, tenant string, recs []record) error {
	p := dbsqlc.JournalPendingInsertParams{TenantID: tenant}
	for _, rec := range recs {
		p.EventIds = append(p.EventIds, rec.EventID)
		p.EventTypes = append(p.EventTypes, rec.Type)
		p.Ats = append(p.Ats, rec.At)
		p.Actors = append(p.Actors, rec.Actor)
		p.WorkareaIds = append(p.WorkareaIds, rec.Workarea) // "" is stored as NULL
		p.Subjects = append(p.Subjects, string(rec.Subject))
		p.Payloads = append(p.Payloads, string(rec.Payload))
	}
	if err := j.q.JournalPendingInsert(ctx, j.db.Later(ctx, "journal: write pending events"), p); err != nil {
		return fmt.Errorf("journal: write pending events: %w", err)
	}
	return nil
}

// record is the hashed form of an event. Subject and Payload are canonical
// JSON, so the hash does not depend on how jsonb re-renders them.
type record struct {
	TenantID string          `json:"tenant_id"`
	Seq      int64           `json:"seq"`
	EventID  string          `json:"event_id"`
	Type     string          `json:"event_type"`
	At       time.Time       `json:"at"`
	Actor    string          `json:"actor"`
	Workarea string          `json:"workarea_id"`
	Subject  json.RawMessage `json:"subject"`
	Payload  json.RawMessage `json:"payload"`
}

func (r record) hash(prev []byte) ([]byte, error) {
	body, err := r.canonical()
	if err != nil {
		return nil, fmt.Errorf("journal: encode event: %w", err)
	}
	h := sha256.New()
	h.Write(prev)
	h.Write(body)
	return h.Sum(nil), nil
}

// canonical is canonjson.Marshal(r), written field by field: the keys in
// their canonical order, Subject and Payload as they are, with no second
// decoding of either. Both are canonical already (record, chainPending
// and Link make them so, and canonical JSON is its own canonical form);
// TestRecordCanonicalIsMarshal holds the two forms equal.
func (r record) canonical() ([]byte, error) {
	at, err := r.At.MarshalJSON() // a quoted RFC 3339 time, nothing to escape
	if err != nil {
		return nil, err
	}
	if r.Seq < -(1<<53) || r.Seq > 1<<53 {
		return canonjson.Marshal(r) // rounded as a float64, as JSON numbers are
	}
	raw := func(m json.RawMessage) ([]byte, error) {
		if m == nil {
			return []byte("null"), nil
		}
		if len(m) == 0 || !json.Valid(m) {
			return nil, fmt.Errorf("not JSON: %.40q", m)
		}
		return m, nil
	}
	subject, err := raw(r.Subject)
	if err != nil {
		return nil, fmt.Errorf("subject: %w", err)
	}
	payload, err := raw(r.Payload)
	if err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	b := make([]byte, 0, 160+len(r.TenantID)+len(r.EventID)+len(r.Type)+len(r.Actor)+len(r.Workarea)+len(subject)+len(payload))
	str := func(b []byte, s string) []byte { return canonjson.AppendString(b, validUTF8(s)) }
	b = append(b, `{"actor":`...)
	b = str(b, r.Actor)
	b = append(b, `,"at":`...)
	b = append(b, at...)
	b = append(b, `,"event_id":`...)
	b = str(b, r.EventID)
	b = append(b, `,"event_type":`...)
	b = str(b, r.Type)
	b = append(b, `,"payload":`...)
	b = append(b, payload...)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, r.Seq, 10)
	b = append(b, `,"subject":`...)
	b = append(b, subject...)
	b = append(b, `,"tenant_id":`...)
	b = str(b, r.TenantID)
	b = append(b, `,"workarea_id":`...)
	b = str(b, r.Workarea)
	return append(b, '}'), nil
}

// validUTF8 is s as encoding/json writes it: each byte that is not part of
// valid UTF-8 replaced by U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.WriteString(s[i : i+n])
		}
		i += n
	}
	return sb.String()
}

// object encodes v canonically and insists on a JSON object (nil → {}).
func object(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage(`{}`), nil
	}
	b, err := canonjson.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" { // a nil map or pointer
		return json.RawMessage(`{}`), nil
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("want a JSON object, got %.40s", b)
	}
	return b, nil
}

// Report is the outcome of [Journal.Verify].
type Report struct {
	Events  int64  `json:"events"`
	HeadSeq int64  `json:"head_seq"`
	OK      bool   `json:"ok"`
	BadSeq  int64  `json:"bad_seq,omitempty"`
	BadID   string `json:"bad_event_id,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Pending counts events committed but not chained yet: the sequencer
	// chains them right after their commit, the sweep after a crash.
	Pending int64 `json:"pending,omitempty"`
}

// Verify recomputes tenant's chain from the first event and reports the
// first event whose seq, link or hash does not hold.
func (j *Journal) Verify(ctx context.Context, tenant string) (Report, error) {
	var rep Report
	// One snapshot: appends committed meanwhile neither move the head nor
	// extend the chain under the check.
	err := j.db.InSnapshot(ctx, func(ctx context.Context) error {
		var err error
		rep, err = j.verify(ctx, tenant)
		return err
	})
	return rep, err
}

func (j *Journal) verify(ctx context.Context, tenant string) (Report, error) {
	conn := j.db.Conn(ctx)
	var rep Report
	head, err := j.q.JournalHead(ctx, conn, tenant)
	if err != nil && !pg.IsNoRows(err) {
		return rep, fmt.Errorf("journal: read head: %w", err)
	}
	rep.HeadSeq = head.Seq
	if rep.Pending, err = j.q.JournalPendingCount(ctx, conn, tenant); err != nil {
		return rep, fmt.Errorf("journal: count pending events: %w", err)
	}
	prev, want := genesis, int64(1)
	const page = 1000
	for {
		rows, err := j.q.JournalEventsAfter(ctx, conn, dbsqlc.JournalEventsAfterParams{TenantID: tenant, Seq: want - 1, Limit: page})
		if err != nil {
			return rep, fmt.Errorf("journal: read events: %w", err)
		}
		for _, row := range rows {
			bad := func(reason string, args ...any) (Report, error) {
				rep.BadSeq, rep.BadID, rep.Reason = row.Seq, row.EventID, fmt.Sprintf(reason, args...)
				return rep, nil
			}
			if row.Seq != want {
				return bad("seq gap: expected %d, found %d", want, row.Seq)
			}
			if !bytes.Equal(row.PrevHash, prev) {
				return bad("prev_hash %s does not link to the hash of seq %d (%s)", short(row.PrevHash), want-1, short(prev))
			}
			rec := record{
				TenantID: row.TenantID, Seq: row.Seq, EventID: row.EventID, Type: row.EventType,
				At: row.At.UTC(), Actor: row.Actor,
			}
			if row.WorkareaID != nil {
				rec.Workarea = *row.WorkareaID
			}
			if rec.Subject, err = canonjson.Canonicalize(row.Subject); err != nil {
				return bad("subject is not JSON: %v", err)
			}
			if rec.Payload, err = canonjson.Canonicalize(row.Payload); err != nil {
				return bad("payload is not JSON: %v", err)
			}
			sum, err := rec.hash(prev)
			if err != nil {
				return rep, err
			}
			if !bytes.Equal(sum, row.Hash) {
				return bad("hash mismatch: stored %s, recomputed %s (the event was altered)", short(row.Hash), short(sum))
			}
			prev, want = row.Hash, want+1
			rep.Events++
		}
		if len(rows) < page {
			break
		}
	}
	if rep.Events != rep.HeadSeq {
		rep.BadSeq, rep.Reason = want, fmt.Sprintf("head is at seq %d but the chain ends at %d", rep.HeadSeq, rep.Events)
		return rep, nil
	}
	if rep.Events > 0 && !bytes.Equal(head.Hash, prev) {
		rep.BadSeq, rep.Reason = rep.HeadSeq, "head hash does not match the last event"
		return rep, nil
	}
	rep.OK = true
	return rep, nil
}

// Stored is one journalled event as readers see it.
type Stored struct {
	Seq      int64
	ID       string
	Type     string
	At       time.Time
	Actor    string
	Workarea string // "" when the event names none
	Subject  json.RawMessage
	Payload  json.RawMessage
	// Hash is the event's link in the tenant's chain; PrevHash the link
	// before it.
	Hash, PrevHash []byte
}

// Head returns the seq of the tenant's newest event (0 before the first).
func (j *Journal) Head(ctx context.Context, tenant string) (int64, error) {
	head, err := j.q.JournalHead(ctx, j.db.Conn(ctx), tenant)
	if pg.IsNoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("journal: read head: %w", err)
	}
	return head.Seq, nil
}

// After returns up to limit of the tenant's events after seq, in order.
func (j *Journal) After(ctx context.Context, tenant string, seq int64, limit int) ([]Stored, error) {
	rows, err := j.q.JournalEventsAfter(ctx, j.db.Conn(ctx), dbsqlc.JournalEventsAfterParams{TenantID: tenant, Seq: seq, Limit: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("journal: read events: %w", err)
	}
	out := make([]Stored, len(rows))
	for i, row := range rows {
		out[i] = Stored{Seq: row.Seq, ID: row.EventID, Type: row.EventType, At: row.At.UTC(), Actor: row.Actor, Subject: row.Subject, Payload: row.Payload, Hash: row.Hash, PrevHash: row.PrevHash}
		if row.WorkareaID != nil {
			out[i].Workarea = *row.WorkareaID
		}
	}
	return out, nil
}

func short(b []byte) string {
	s := hex.EncodeToString(b)
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

// InWorkarea returns up to limit of one workarea's events strictly between
// after and before (before 0: no upper bound), oldest first, or newest
// first when newestFirst.
func (j *Journal) InWorkarea(ctx context.Context, tenant, workarea string, after, before int64, limit int, newestFirst bool) ([]Stored, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	var rows []dbsqlc.PlatformJournalEvent
	var err error
	if newestFirst {
		rows, err = j.q.JournalEventsInWorkareaBefore(ctx, j.db.Conn(ctx), dbsqlc.JournalEventsInWorkareaBeforeParams{
			TenantID: tenant, WorkareaID: workarea, AfterSeq: after, BeforeSeq: before, MaxRows: int32(limit)})
	} else {
		rows, err = j.q.JournalEventsInWorkareaAfter(ctx, j.db.Conn(ctx), dbsqlc.JournalEventsInWorkareaAfterParams{
			TenantID: tenant, WorkareaID: workarea, AfterSeq: after, BeforeSeq: before, MaxRows: int32(limit)})
	}
	if err != nil {
		return nil, fmt.Errorf("journal: read workarea events: %w", err)
	}
	out := make([]Stored, len(rows))
	for i, row := range rows {
		out[i] = Stored{Seq: row.Seq, ID: row.EventID, Type: row.EventType, At: row.At.UTC(), Actor: row.Actor, Subject: row.Subject, Payload: row.Payload, Workarea: workarea, Hash: row.Hash, PrevHash: row.PrevHash}
	}
	return out, nil
}

// SeqRange returns the first and last seq of a tenant's events at times in
// [from, to] (0, 0 when there are none). Seqs grow with time only to within
// a unit of work's length plus the sequencing delay: an event's time is
// taken when it is appended, its seq as its unit of work commits or right
// after.
func (j *Journal) SeqRange(ctx context.Context, tenant string, from, to time.Time) (first, last int64, err error) {
	r, err := j.q.JournalSeqRange(ctx, j.db.Conn(ctx), dbsqlc.JournalSeqRangeParams{TenantID: tenant, FromAt: from, ToAt: to})
	if err != nil {
		return 0, 0, fmt.Errorf("journal: seq range: %w", err)
	}
	return r.FirstSeq, r.LastSeq, nil
}

// Link recomputes an event's hash from the hash before it: what Verify
// checks, for a verifier holding only exported events (the evidence
// export).
func Link(prev []byte, tenant string, e Stored) ([]byte, error) {
	rec := record{TenantID: tenant, Seq: e.Seq, EventID: e.ID, Type: e.Type, At: e.At.UTC(), Actor: e.Actor, Workarea: e.Workarea}
	var err error
	if rec.Subject, err = canonjson.Canonicalize(e.Subject); err != nil {
		return nil, fmt.Errorf("subject is not JSON: %w", err)
	}
	if rec.Payload, err = canonjson.Canonicalize(e.Payload); err != nil {
		return nil, fmt.Errorf("payload is not JSON: %w", err)
	}
	return rec.hash(prev)
}

// Genesis is the prev_hash of a tenant's first event.
func Genesis() []byte { return append([]byte(nil), genesis...) }

// HeadLink returns the seq and hash of a tenant's newest event (0 and the
// genesis link before the first).
func (j *Journal) HeadLink(ctx context.Context, tenant string) (int64, []byte, error) {
	head, err := j.q.JournalHead(ctx, j.db.Conn(ctx), tenant)
	if pg.IsNoRows(err) {
		return 0, Genesis(), nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("journal: read head: %w", err)
	}
	return head.Seq, head.Hash, nil
}

// Simulation returns the simulation (D10) of the row the event is about,
// which admission names in the subject, or "" for none; every read of the
// journal fences the event by it. The simulations' own events
// (simulation.create, simulation.end) are administration, about no row.
// A subject that mentions a simulation but does not parse names an
// unknown one, so every fence keeps the event out (fail closed).
func (e Stored) Simulation() string {
	if strings.HasPrefix(e.Type, "simulation.") || !bytes.Contains(e.Subject, []byte(`"simulation_id"`)) {
		return ""
	}
	// The substring may be a value (a claim key may read simulation_id):
	// only the subject's own member counts.
	var s map[string]json.RawMessage
	if json.Unmarshal(e.Subject, &s) != nil {
		return "unreadable"
	}
	raw, ok := s["simulation_id"]
	if !ok {
		return ""
	}
	var id string
	if json.Unmarshal(raw, &id) != nil || id == "" {
		return "unreadable"
	}
	return id
}
