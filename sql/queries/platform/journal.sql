-- name: JournalHeadLock :one
-- Locks the tenant's head row. After waiting for another writer, FOR UPDATE
-- returns the row version it locked (the newest), not the statement's
-- snapshot, so the seq and hash it yields are the chain's true head.
SELECT seq, hash FROM platform.journal_heads
WHERE tenant_id = $1
FOR UPDATE;

-- name: JournalHeadTryLock :one
-- The tenant's head, locked unless another transaction holds it (no rows
-- then, nor when there is no head yet), and whether events are pending.
SELECT h.seq, h.hash,
    EXISTS (SELECT 1 FROM platform.journal_pending p WHERE p.tenant_id = @tenant_id) AS pending
FROM platform.journal_heads h
WHERE h.tenant_id = @tenant_id
FOR UPDATE OF h SKIP LOCKED;

-- name: JournalHeadLockIfPending :one
-- The sequencer's lock: the tenant's head, locked only when the statement
-- sees pending events (no rows otherwise, or when there is no head yet).
-- Pending rows another transaction is moving are still seen, so the lock
-- waits for it; rows a committed one moved are not, and nothing is locked.
SELECT h.seq, h.hash FROM platform.journal_heads h
WHERE h.tenant_id = @tenant_id
  AND EXISTS (SELECT 1 FROM platform.journal_pending p WHERE p.tenant_id = @tenant_id)
FOR UPDATE OF h;

-- name: JournalHeadInit :exec
INSERT INTO platform.journal_heads (tenant_id, seq, hash)
VALUES ($1, 0, $2)
ON CONFLICT (tenant_id) DO NOTHING;

-- name: JournalEventsInsert :exec
-- Chains a run of events (seqs consecutive, each prev_hash the hash before
-- it) and moves the head to the last of them, in one statement.
WITH ins AS (
    INSERT INTO platform.journal_events (
        tenant_id, seq, event_id, event_type, at, actor, workarea_id, subject, payload, prev_hash, hash
    )
    -- Set-returning functions in one SELECT list advance together (the
    -- arrays have one element per event).
    SELECT @tenant_id, unnest(@seqs::bigint[]), unnest(@event_ids::text[]), unnest(@event_types::text[]),
        unnest(@ats::timestamptz[]), unnest(@actors::text[]), NULLIF(unnest(@workarea_ids::text[]), ''),
        unnest(@subjects::text[])::jsonb, unnest(@payloads::text[])::jsonb,
        unnest(@prev_hashes::bytea[]), unnest(@hashes::bytea[])
)
UPDATE platform.journal_heads h
SET seq = @head_seq, hash = @head_hash
WHERE h.tenant_id = @tenant_id;

-- name: JournalPendingInsert :exec
-- Writes a unit of work's events of one tenant for the sequencer, in
-- array order (ids rise with it), in one statement.
INSERT INTO platform.journal_pending (tenant_id, event_id, event_type, at, actor, workarea_id, subject, payload)
SELECT @tenant_id, unnest(@event_ids::text[]), unnest(@event_types::text[]), unnest(@ats::timestamptz[]),
    unnest(@actors::text[]), NULLIF(unnest(@workarea_ids::text[]), ''),
    unnest(@subjects::text[])::jsonb, unnest(@payloads::text[])::jsonb;

-- name: JournalPendingTake :many
-- Removes up to max_rows of the tenant's oldest pending events and returns
-- them (in no order: the caller sorts by id). Run under the head's lock.
DELETE FROM platform.journal_pending
WHERE id IN (
    SELECT p.id FROM platform.journal_pending p
    WHERE p.tenant_id = @tenant_id
    ORDER BY p.id
    LIMIT @max_rows
)
RETURNING id, event_id, event_type, at, actor, workarea_id, subject, payload;

-- name: JournalPendingTenants :many
-- Tenants with events waiting to be chained (the journal sweep), those
-- waiting longest first.
SELECT tenant_id FROM platform.journal_pending
GROUP BY tenant_id
ORDER BY min(id)
LIMIT @max_rows;

-- name: JournalPendingCount :one
SELECT count(*) FROM platform.journal_pending WHERE tenant_id = $1;

-- name: JournalHead :one
SELECT seq, hash FROM platform.journal_heads WHERE tenant_id = $1;

-- name: JournalEventsAfter :many
SELECT tenant_id, seq, event_id, event_type, at, actor, workarea_id, subject, payload, prev_hash, hash
FROM platform.journal_events
WHERE tenant_id = $1 AND seq > $2
ORDER BY seq
LIMIT $3;

-- name: JournalEventsInWorkareaAfter :many
-- One workarea's events after seq (and before before_seq), oldest first:
-- the feed's forward read.
SELECT tenant_id, seq, event_id, event_type, at, actor, workarea_id, subject, payload, prev_hash, hash
FROM platform.journal_events
WHERE tenant_id = @tenant_id AND workarea_id = @workarea_id::text AND seq > @after_seq AND seq < @before_seq
ORDER BY seq
LIMIT @max_rows;

-- name: JournalEventsInWorkareaBefore :many
-- One workarea's events before before_seq (and after after_seq), newest
-- first: the feed's backward read.
SELECT tenant_id, seq, event_id, event_type, at, actor, workarea_id, subject, payload, prev_hash, hash
FROM platform.journal_events
WHERE tenant_id = @tenant_id AND workarea_id = @workarea_id::text AND seq > @after_seq AND seq < @before_seq
ORDER BY seq DESC
LIMIT @max_rows;

-- name: JournalSeqRange :one
-- The first and last seq of a tenant's events in a time range (0, 0 when
-- none).
SELECT COALESCE(min(seq), 0)::bigint AS first_seq, COALESCE(max(seq), 0)::bigint AS last_seq
FROM platform.journal_events
WHERE tenant_id = @tenant_id AND at >= @from_at AND at <= @to_at;
-- name: JournalPendingExists :one
SELECT EXISTS (SELECT 1 FROM platform.journal_pending WHERE tenant_id = $1);
