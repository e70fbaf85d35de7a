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
-- permission epoch, whether the key is revoked, the reason of its
-- principal's live ban (NULL when there is none; at most one is live), and
-- every live grant with the id path of its workarea (one row per grant, or
-- one row of NULLs). Effective access at any node is computed from these in
-- the domain, so the verbs reported are exactly those of the epoch reported
-- beside them. With at_id or at_path (never both) it also reads the
-- tenant's workarea of that id or path, the same on every row (at_id NULL
-- when there is none): a request's first access check reads both in one
-- round trip.
SELECT t.permission_epoch, k.revoked_at, b.reason AS ban_reason,
       g.id AS grant_id, g.workarea_id, g.scope, g.effect, coalesce(w.id_path::text, '')::text AS id_path,
       tw.id AS at_id, tw.parent_id AS at_parent_id, coalesce(tw.name, '')::text AS at_name,
       coalesce(tw.path, '')::text AS at_path, coalesce(tw.id_path::text, '')::text AS at_id_path,
       coalesce(tw.status, '')::text AS at_status, tw.crew AS at_crew,
       coalesce(tw.created_at, 'epoch')::timestamptz AS at_created_at,
       coalesce(tw.updated_at, 'epoch')::timestamptz AS at_updated_at
FROM access.tenants t
JOIN access.keys k ON k.tenant_id = t.id AND k.id = @key_id
LEFT JOIN access.bans b ON b.tenant_id = t.id AND b.principal_id = k.principal_id AND b.lifted_at IS NULL
LEFT JOIN access.workareas tw ON tw.tenant_id = t.id
    AND (tw.id = sqlc.narg(at_id)::text OR tw.path = sqlc.narg(at_path)::text)
LEFT JOIN access.grants g ON g.tenant_id = t.id AND g.key_id = k.id AND g.removed_at IS NULL
LEFT JOIN access.workareas w ON w.tenant_id = g.tenant_id AND w.id = g.workarea_id
WHERE t.id = @tenant_id;

-- name: GrantStampEpoch :exec
-- The epoch a grant took effect at, or (removed) lost it at.
UPDATE access.grants
SET created_epoch = CASE WHEN @removed::boolean THEN created_epoch ELSE @epoch::bigint END,
    removed_epoch = CASE WHEN @removed::boolean THEN @epoch::bigint ELSE removed_epoch END
WHERE tenant_id = @tenant_id AND id = @id;

-- name: GrantsList :many
-- Grants of one key or on one workarea ('' for either: any), live now
-- (at_epoch < 0) or in force at at_epoch (made by then, not removed by
-- then, their key not revoked by then), after a grant id, in id order.
SELECT g.id, g.key_id, g.workarea_id, w.path AS workarea_path, g.scope, g.effect, g.created_at, g.removed_at,
       g.created_epoch, g.removed_epoch, p.name AS principal,
       (k.revoked_at IS NOT NULL)::boolean AS key_revoked
FROM access.grants g
JOIN access.keys k ON k.tenant_id = g.tenant_id AND k.id = g.key_id
JOIN access.principals p ON p.tenant_id = k.tenant_id AND p.id = k.principal_id
JOIN access.workareas w ON w.tenant_id = g.tenant_id AND w.id = g.workarea_id
WHERE g.tenant_id = @tenant_id
  AND (@key_id::text = '' OR g.key_id = @key_id::text)
  AND (@workarea_id::text = '' OR g.workarea_id = @workarea_id::text)
  AND CASE WHEN @at_epoch::bigint < 0 THEN g.removed_at IS NULL
           ELSE g.created_epoch <= @at_epoch::bigint AND (g.removed_epoch IS NULL OR g.removed_epoch > @at_epoch::bigint)
                AND (k.revoked_epoch IS NULL OR k.revoked_epoch > @at_epoch::bigint) END
  AND g.id > @after_id::text
ORDER BY g.id
LIMIT @max_rows;
