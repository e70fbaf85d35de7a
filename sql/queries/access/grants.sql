-- name: GrantInsert :one
-- Inserts a grant unless an identical live one exists (then no row).
INSERT INTO access.grants (tenant_id, id, key_id, workarea_id, scope, effect, created_by, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (tenant_id, key_id, workarea_id, scope, effect) WHERE removed_at IS NULL DO NOTHING
RETURNING id;

-- name: GrantLive :one
SELECT id FROM access.grants
WHERE tenant_id = $1 AND key_id = $2 AND workarea_id = $3 AND scope = $4 AND effect = $5
  AND removed_at IS NULL;

-- name: GrantByID :one
SELECT id, key_id, workarea_id, scope, effect, created_at, removed_at
FROM access.grants
WHERE tenant_id = $1 AND id = $2;

-- name: GrantRemove :execrows
UPDATE access.grants SET removed_at = $3, removed_by = $4
WHERE tenant_id = $1 AND id = $2 AND removed_at IS NULL;

-- name: AccessSnapshot :many
-- A key's access in one statement, hence one snapshot: the tenant's
-- permission epoch, whether the key is revoked, and every live grant with
-- the id path of its workarea (one row per grant, or one row of NULLs).
-- Effective access at any node is computed from these in the domain, so the
-- verbs reported are exactly those of the epoch reported beside them.
SELECT t.permission_epoch, k.revoked_at,
       g.id AS grant_id, g.workarea_id, g.scope, g.effect, coalesce(w.id_path::text, '')::text AS id_path
FROM access.tenants t
JOIN access.keys k ON k.tenant_id = t.id AND k.id = @key_id
LEFT JOIN access.grants g ON g.tenant_id = t.id AND g.key_id = k.id AND g.removed_at IS NULL
LEFT JOIN access.workareas w ON w.tenant_id = g.tenant_id AND w.id = g.workarea_id
WHERE t.id = @tenant_id;

-- name: GrantsOnWorkarea :many
-- Live grants bound to one workarea, with their keys' principals, oldest
-- first; limit+1 rows tell the caller more exist.
SELECT g.id, g.key_id, g.scope, g.effect, g.created_at, p.name AS principal, k.revoked_at
FROM access.grants g
JOIN access.keys k ON k.tenant_id = g.tenant_id AND k.id = g.key_id
JOIN access.principals p ON p.tenant_id = k.tenant_id AND p.id = k.principal_id
WHERE g.tenant_id = $1 AND g.workarea_id = $2 AND g.removed_at IS NULL
ORDER BY g.created_at, g.id
LIMIT $3;
