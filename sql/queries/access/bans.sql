-- name: BanInsert :exec
INSERT INTO access.bans (tenant_id, id, principal_id, reason, created_by, created_at)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: BanLift :one
UPDATE access.bans SET lifted_by = $3, lifted_at = $4
WHERE tenant_id = $1 AND id = $2 AND lifted_at IS NULL
RETURNING principal_id;

-- name: BansList :many
SELECT b.id, b.principal_id, p.name AS principal, b.reason, b.created_at, b.lifted_at
FROM access.bans b
JOIN access.principals p ON p.tenant_id = b.tenant_id AND p.id = b.principal_id
WHERE b.tenant_id = $1
ORDER BY b.id DESC;

-- name: PrincipalByName :one
SELECT id, name FROM access.principals WHERE tenant_id = $1 AND name = $2;
