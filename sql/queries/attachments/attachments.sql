-- name: SessionInsert :exec
INSERT INTO attachments.sessions (
    tenant_id, id, key_id, state, media_type, size_bytes, expected_sha256, part_size,
    address, object_key, store_upload, wrapped_key, created_at, expires_at
) VALUES (
    @tenant_id, @id, @key_id, 'open', @media_type, @size_bytes, @expected_sha256, @part_size,
    @address, @object_key, @store_upload, @wrapped_key, @created_at, @expires_at
);

-- name: SessionGet :one
SELECT * FROM attachments.sessions WHERE tenant_id = $1 AND id = $2;

-- name: SessionsForBind :many
-- Sessions a submission names, locked first, in id order, with the lock
-- the binding's UPDATE needs: submissions naming the same session queue
-- here behind the first and read it bound once it commits. A shared lock
-- upgraded later by that UPDATE deadlocked every such submission.
SELECT * FROM attachments.sessions WHERE tenant_id = $1 AND id = ANY(@ids::text[])
ORDER BY id
FOR NO KEY UPDATE;

-- name: SessionsOpenCount :one
SELECT count(*) FROM attachments.sessions
WHERE tenant_id = $1 AND key_id = $2 AND state = 'open' AND expires_at > @now;

-- name: SessionLease :one
-- Takes the session's write lease unless another writer holds a live one.
UPDATE attachments.sessions
SET lease_token = @token, lease_until = @until
WHERE tenant_id = @tenant_id AND id = @id AND state = 'open'
  AND (lease_until IS NULL OR lease_until <= @now)
RETURNING *;

-- name: SessionRelease :exec
UPDATE attachments.sessions SET lease_token = NULL, lease_until = NULL
WHERE tenant_id = $1 AND id = $2 AND lease_token = @token;

-- name: SessionProgress :execrows
-- Records a stored part and releases the lease, if the session is still
-- open and the lease still this writer's. On completion the wrapped key
-- and the running digest leave the session (the key lives in the blob).
UPDATE attachments.sessions
SET parts_received = @parts_received, bytes_received = @bytes_received,
    hash_state = CASE WHEN @state::text = 'open' THEN sqlc.narg(hash_state)::bytea END,
    part_sha256 = @part_sha256, part_etags = @part_etags, part_writes = @part_writes,
    state = @state::text, reason = @reason, completed_at = @completed_at,
    wrapped_key = CASE WHEN @state::text = 'open' THEN wrapped_key END,
    lease_token = NULL, lease_until = NULL
WHERE tenant_id = @tenant_id AND id = @id AND state = 'open' AND lease_token = @token;

-- name: SessionKeyForUpdate :one
-- The session's wrapped data key as it is now, its row locked for the
-- completion that moves the key to the blob: a rewrap since the lease
-- (oml-server rewrap) is not lost.
SELECT wrapped_key FROM attachments.sessions
WHERE tenant_id = @tenant_id AND id = @id AND state = 'open' AND lease_token = @token
FOR UPDATE;

-- name: SessionClose :one
-- Ends an open session (abort, digest mismatch, expiry): its key and
-- running digest go.
UPDATE attachments.sessions
SET state = @state, reason = @reason, lease_token = NULL, lease_until = NULL, wrapped_key = NULL, hash_state = NULL
WHERE tenant_id = @tenant_id AND id = @id AND state = 'open'
RETURNING *;

-- name: SessionsExpireDue :many
-- Open sessions past their expiry become expired; SKIP LOCKED lets every
-- replica sweep without waiting on another.
UPDATE attachments.sessions s SET state = 'expired', reason = 'expired before its last part', lease_token = NULL, lease_until = NULL,
    wrapped_key = NULL, hash_state = NULL
WHERE (s.tenant_id, s.id) IN (
    SELECT x.tenant_id, x.id FROM attachments.sessions x
    WHERE x.state = 'open' AND x.expires_at <= @now
    ORDER BY x.expires_at
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED
)
RETURNING s.*;

-- name: AddressLock :exec
-- Serialises completion and shredding of one tenant's content.
SELECT pg_advisory_xact_lock(hashtextextended(@tenant_id::text || '/' || @address::text, 0));

-- name: BlobGet :one
SELECT * FROM attachments.blobs WHERE tenant_id = $1 AND sha256 = $2;

-- name: BlobInsert :exec
INSERT INTO attachments.blobs (tenant_id, sha256, address, object_key, size_bytes, part_size, part_writes, wrapped_key, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: BlobDelete :one
DELETE FROM attachments.blobs WHERE tenant_id = $1 AND sha256 = $2 RETURNING *;

-- name: SessionBind :execrows
-- Marks a complete session bound, once.
UPDATE attachments.sessions SET bound_at = @at
WHERE tenant_id = @tenant_id AND id = @id AND state = 'complete' AND bound_at IS NULL;

-- name: BindingInsert :exec
INSERT INTO attachments.bindings (tenant_id, artifact_id, sha256, session_id, media_type, size_bytes)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT DO NOTHING;

-- name: BindingGet :one
SELECT * FROM attachments.bindings WHERE tenant_id = $1 AND artifact_id = $2 AND sha256 = $3;

-- name: BindingsDelete :many
DELETE FROM attachments.bindings WHERE tenant_id = $1 AND artifact_id = $2 RETURNING sha256;

-- name: BlobInUse :one
-- Whether content is still needed: bound to a claim, or completed by a
-- session that may still bind it. An open session does not count: it
-- proves nothing yet, and its completion checks the blob again.
SELECT EXISTS (SELECT 1 FROM attachments.bindings b WHERE b.tenant_id = @tenant_id AND b.sha256 = @sha256)
    OR EXISTS (SELECT 1 FROM attachments.sessions s WHERE s.tenant_id = @tenant_id AND s.expected_sha256 = @sha256
               AND s.state = 'complete' AND s.bound_at IS NULL AND s.expires_at > @now);

-- name: SessionsScrub :exec
-- After a shred: nothing about the content stays in its ended sessions.
UPDATE attachments.sessions SET wrapped_key = NULL, hash_state = NULL, part_sha256 = '{}'
WHERE tenant_id = @tenant_id AND expected_sha256 = @sha256 AND state <> 'open';

-- name: BlobsUnused :many
-- Blobs no claim binds and no live session holds, for the sweeper.
SELECT b.tenant_id, b.sha256 FROM attachments.blobs b
WHERE NOT EXISTS (SELECT 1 FROM attachments.bindings x WHERE x.tenant_id = b.tenant_id AND x.sha256 = b.sha256)
  AND NOT EXISTS (SELECT 1 FROM attachments.sessions s WHERE s.tenant_id = b.tenant_id AND s.expected_sha256 = b.sha256
                  AND s.state = 'complete' AND s.bound_at IS NULL AND s.expires_at > @now)
LIMIT @max_rows;

-- name: DoomedInsert :one
INSERT INTO attachments.doomed (tenant_id, object_key, store_upload, queued_at, not_before)
VALUES ($1, $2, $3, $4, $5)
RETURNING id;

-- name: DoomedClaim :many
-- Claims due rows for one sweeper for a while (it works outside any
-- transaction); a sweeper that dies leaves them due again later.
UPDATE attachments.doomed d SET not_before = @until
WHERE d.id IN (
    SELECT x.id FROM attachments.doomed x WHERE x.not_before <= @now
    ORDER BY x.id LIMIT @max_rows FOR UPDATE SKIP LOCKED
)
RETURNING d.*;

-- name: DoomedDelete :exec
DELETE FROM attachments.doomed WHERE id = $1;

-- name: BindingsList :many
SELECT * FROM attachments.bindings WHERE tenant_id = $1 AND artifact_id = $2 ORDER BY sha256;

-- name: TenantLimit :one
SELECT max_upload_bytes FROM attachments.tenant_limits WHERE tenant_id = $1;

-- name: TenantLimitSet :exec
INSERT INTO attachments.tenant_limits (tenant_id, max_upload_bytes) VALUES ($1, $2)
ON CONFLICT (tenant_id) DO UPDATE SET max_upload_bytes = EXCLUDED.max_upload_bytes, updated_at = now();

-- name: TenantLimitClear :exec
DELETE FROM attachments.tenant_limits WHERE tenant_id = $1;

-- name: BlobKeysAfter :many
-- Stored data keys in (tenant, digest) order after a cursor, for
-- `oml-server rewrap` after a master-key rotation.
SELECT tenant_id, sha256, address, wrapped_key FROM attachments.blobs
WHERE (tenant_id, sha256) > (@tenant_id::text, @sha256::bytea)
ORDER BY tenant_id, sha256
LIMIT @max_rows;

-- name: BlobKeyRewrap :execrows
-- Replaces a blob's wrapped data key if it is still the one read (a
-- shred in between wins).
UPDATE attachments.blobs SET wrapped_key = @next
WHERE tenant_id = @tenant_id AND sha256 = @sha256 AND wrapped_key = @prev;

-- name: SessionKeysAfter :many
-- Upload sessions that still hold a wrapped data key, in (tenant, id)
-- order after a cursor.
SELECT tenant_id, id, address, wrapped_key FROM attachments.sessions
WHERE wrapped_key IS NOT NULL AND (tenant_id, id) > (@tenant_id::text, @id::text)
ORDER BY tenant_id, id
LIMIT @max_rows;

-- name: SessionKeyRewrap :execrows
-- Replaces a session's wrapped data key if it is still the one read (a
-- close in between wins).
UPDATE attachments.sessions SET wrapped_key = @next
WHERE tenant_id = @tenant_id AND id = @id AND wrapped_key = @prev;

-- name: AddressSample :many
-- One stored content address with what it was made from, for the
-- startup check that the address key is the one the data was made with.
SELECT tenant_id, expected_sha256, address FROM attachments.sessions LIMIT 1;
