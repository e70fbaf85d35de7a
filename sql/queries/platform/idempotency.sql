-- name: IdempotencyClaim :execrows
-- Inserts the record for a first request. A concurrent duplicate blocks on
-- the uncommitted row and, once it commits, inserts nothing.
INSERT INTO platform.idempotency_records (
    tenant_id, key_id, workarea, operation, idempotency_key, request_hash
) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT DO NOTHING;

-- name: IdempotencyGet :one
SELECT request_hash, response
FROM platform.idempotency_records
WHERE tenant_id = $1 AND key_id = $2 AND workarea = $3 AND operation = $4 AND idempotency_key = $5;

-- name: IdempotencyComplete :exec
UPDATE platform.idempotency_records
SET response = $6
WHERE tenant_id = $1 AND key_id = $2 AND workarea = $3 AND operation = $4 AND idempotency_key = $5;

-- name: IdempotencyPurge :execrows
-- Completed records older than the cutoff, a batch at a time (a record
-- still claimed inside its transaction has no response and is left).
DELETE FROM platform.idempotency_records
WHERE (tenant_id, key_id, workarea, operation, idempotency_key) IN (
    SELECT r.tenant_id, r.key_id, r.workarea, r.operation, r.idempotency_key
    FROM platform.idempotency_records r
    WHERE r.created_at < @cutoff AND r.response IS NOT NULL
    LIMIT @max_rows
);
