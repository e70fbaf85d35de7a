-- name: ItemInsert :exec
INSERT INTO inbox.items (
    tenant_id, id, kind, workarea_id, workarea_id_path, asker_key_id, asker_principal_id, asker_principal,
    body, options, created_at, expires_at, on_expiry, seq
) VALUES (
    @tenant_id, @id, @kind, @workarea_id, @workarea_id_path, @asker_key_id, @asker_principal_id, @asker_principal,
    @body, @options, @created_at, @expires_at, @on_expiry, @seq
);

-- name: ItemGet :one
SELECT * FROM inbox.items WHERE tenant_id = $1 AND id = $2;

-- name: ItemGetForUpdate :one
SELECT * FROM inbox.items WHERE tenant_id = $1 AND id = $2 FOR UPDATE;

-- name: ItemResolve :execrows
-- Closes an open item; the status guard makes a second resolution a no-op
-- the caller detects (0 rows).
UPDATE inbox.items
SET status = @status, resolved_at = @resolved_at, resolved_by = @resolved_by, resolution_body = @resolution_body,
    expired = @expired, answer_event_id = @answer_event_id, seq = @seq
WHERE tenant_id = @tenant_id AND id = @id AND status = 'open';

-- name: ItemsOpenCount :one
SELECT count(*) FROM inbox.items
WHERE tenant_id = @tenant_id AND asker_principal_id = @asker_principal_id AND workarea_id = @workarea_id AND status = 'open';

-- name: ItemsDueClaim :many
-- Open items past their deadline, locked for resolution; SKIP LOCKED lets
-- every replica sweep at once without two resolving one item. An empty
-- tenant_id sweeps every tenant.
SELECT * FROM inbox.items
WHERE status = 'open' AND expires_at IS NOT NULL AND expires_at <= @now
  AND (@tenant_id::text = '' OR tenant_id = @tenant_id::text)
ORDER BY expires_at
LIMIT @max_rows
FOR UPDATE SKIP LOCKED;

-- name: ItemsAfter :many
-- Items in cursor order after seq, optionally by status and asker.
SELECT * FROM inbox.items
WHERE tenant_id = @tenant_id AND seq > @after_seq
  AND (@status::text = '' OR status = @status::text OR (@status::text = 'resolved' AND status <> 'open'))
  AND (@asker::text = '' OR asker_principal = @asker::text OR asker_key_id = @asker::text)
  AND (@workarea_id_path::text = '' OR workarea_id_path = @workarea_id_path::text OR workarea_id_path LIKE @workarea_id_path::text || '.%')
ORDER BY seq
LIMIT @max_rows;

-- name: ItemsNewest :many
-- Items after seq and before before_seq, newest first: the human's
-- latest resolutions.
SELECT * FROM inbox.items
WHERE tenant_id = @tenant_id AND seq > @after_seq AND seq < @before_seq
  AND (@status::text = '' OR status = @status::text OR (@status::text = 'resolved' AND status <> 'open'))
  AND (@asker::text = '' OR asker_principal = @asker::text OR asker_key_id = @asker::text)
  AND (@workarea_id_path::text = '' OR workarea_id_path = @workarea_id_path::text OR workarea_id_path LIKE @workarea_id_path::text || '.%')
ORDER BY seq DESC
LIMIT @max_rows;

-- name: ItemsOpenLock :exec
-- Serialises open-item writes of one (principal, workarea) so the cap
-- holds under concurrency.
SELECT pg_advisory_xact_lock(hashtextextended(@tenant_id::text || '/' || @asker_principal_id::text || '/' || @workarea_id::text, 0));

-- name: WorkareaEventsIncrement :one
INSERT INTO inbox.workarea_events (tenant_id, workarea_id, events) VALUES ($1, $2, 1)
ON CONFLICT (tenant_id, workarea_id) DO UPDATE SET events = inbox.workarea_events.events + 1
RETURNING events;

-- name: FeedCursorGet :one
SELECT seq FROM inbox.feed_cursors WHERE tenant_id = $1 AND principal_id = $2 AND workarea_id = $3;

-- name: FeedCursorSet :exec
INSERT INTO inbox.feed_cursors (tenant_id, principal_id, workarea_id, seq, updated_at)
VALUES ($1, $2, $3, $4, $5)
-- A cursor only moves forward: concurrent polls never move it back.
ON CONFLICT (tenant_id, principal_id, workarea_id) DO UPDATE
SET seq = GREATEST(inbox.feed_cursors.seq, EXCLUDED.seq), updated_at = EXCLUDED.updated_at;

-- name: ItemsOldestDue :one
-- The deadline of the open item that has been due longest (@now when none
-- is), for the sweeper's lag in /metrics.
SELECT coalesce(min(expires_at), @now::timestamptz)::timestamptz AS due FROM inbox.items
WHERE status = 'open' AND expires_at IS NOT NULL AND expires_at <= @now::timestamptz;
