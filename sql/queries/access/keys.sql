-- name: KeyInsert :exec
INSERT INTO access.keys (tenant_id, id, principal_id, role, selector, verifier, created_by, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8);

-- name: KeyBySelector :one
SELECT k.tenant_id, k.id, k.role, k.verifier, k.revoked_at, p.id AS principal_id, p.name AS principal
FROM access.keys k
JOIN access.principals p ON p.tenant_id = k.tenant_id AND p.id = k.principal_id
WHERE k.selector = $1;

-- name: KeyByID :one
SELECT k.id, k.role, k.created_at, k.revoked_at, p.id AS principal_id, p.name AS principal
FROM access.keys k
JOIN access.principals p ON p.tenant_id = k.tenant_id AND p.id = k.principal_id
WHERE k.tenant_id = $1 AND k.id = $2;

-- name: KeysList :many
SELECT k.id, k.role, k.created_at, k.revoked_at, p.id AS principal_id, p.name AS principal
FROM access.keys k
JOIN access.principals p ON p.tenant_id = k.tenant_id AND p.id = k.principal_id
WHERE k.tenant_id = $1
ORDER BY k.id;

-- name: KeyRevoke :execrows
UPDATE access.keys SET revoked_at = $3
WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL;

-- name: KeyStampRevokedEpoch :exec
UPDATE access.keys SET revoked_epoch = $3 WHERE tenant_id = $1 AND id = $2;
