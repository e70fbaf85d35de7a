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
