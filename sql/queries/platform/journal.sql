-- name: JournalHeadAdvance :one
-- Locks the tenant's head row and returns the new seq with the hash of the
-- event before it, both from the row version this statement locked.
UPDATE platform.journal_heads
SET seq = seq + 1
WHERE tenant_id = $1
RETURNING seq, hash;

-- name: JournalHeadInit :exec
INSERT INTO platform.journal_heads (tenant_id, seq, hash)
VALUES ($1, 0, $2)
ON CONFLICT (tenant_id) DO NOTHING;

-- name: JournalEventInsert :exec
WITH ins AS (
    INSERT INTO platform.journal_events (
        tenant_id, seq, event_id, event_type, at, actor, workarea_id, subject, payload, prev_hash, hash
    ) VALUES (
        @tenant_id, @seq, @event_id, @event_type, @at, @actor, @workarea_id, @subject, @payload, @prev_hash, @hash
    )
)
UPDATE platform.journal_heads h
SET hash = @hash
WHERE h.tenant_id = @tenant_id;

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
