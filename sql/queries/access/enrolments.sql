-- name: EnrolmentInsert :exec
INSERT INTO access.enrolments (tenant_id, id, selector, verifier, reason, peer, status, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8);

-- name: EnrolmentSetItem :exec
UPDATE access.enrolments SET item_id = $3 WHERE tenant_id = $1 AND id = $2;

-- name: EnrolmentBySelector :one
SELECT * FROM access.enrolments WHERE selector = $1;

-- name: EnrolmentForUpdate :one
SELECT * FROM access.enrolments WHERE tenant_id = $1 AND id = $2 FOR UPDATE;

-- name: EnrolmentDecide :exec
UPDATE access.enrolments
SET status = @status, decided_at = @decided_at, decided_by = @decided_by, note = @note, key_id = sqlc.narg(key_id)
WHERE tenant_id = @tenant_id AND id = @id AND status = 'pending';

-- name: EnrolmentsLock :exec
-- Serialises a tenant's new requests until the transaction ends, so two
-- never both take the last pending slot.
SELECT pg_advisory_xact_lock(hashtextextended('access.enrolments/' || @tenant_id::text, 0));

-- name: EnrolmentsPending :one
-- Pending requests of a tenant not yet abandoned.
SELECT count(*)::bigint FROM access.enrolments
WHERE tenant_id = $1 AND status = 'pending' AND expires_at > @now;

-- name: EnrolmentsAbandon :many
-- Pending requests older than the TTL are abandoned: removed (their inbox
-- items expire on their own deadline).
DELETE FROM access.enrolments
WHERE (tenant_id, id) IN (
    SELECT e.tenant_id, e.id FROM access.enrolments e
    WHERE e.status = 'pending' AND e.expires_at <= @now
    ORDER BY e.created_at LIMIT @max_rows
    FOR UPDATE SKIP LOCKED
)
RETURNING tenant_id, id;

-- name: TenantByName :one
SELECT id FROM access.tenants WHERE name = $1;
