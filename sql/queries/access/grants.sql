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

-- name: GrantsForKey :many
-- Every live grant of a key with the id path of its workarea; effective
-- access at any node is computed from these in the domain.
SELECT g.id, g.workarea_id, g.scope, g.effect, w.id_path::text AS id_path
FROM access.grants g
JOIN access.workareas w ON w.tenant_id = g.tenant_id AND w.id = g.workarea_id
WHERE g.tenant_id = $1 AND g.key_id = $2 AND g.removed_at IS NULL;
