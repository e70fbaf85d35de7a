-- name: SessionInsert :execrows
-- A new session; a concurrent start of the same (workarea, owner, name)
-- inserts nothing and the caller reads the winner's row.
INSERT INTO sessions.sessions (
    tenant_id, id, workarea_id, workarea_id_path, name, owner_principal_id, owner_principal, owner_key_id,
    status, handoff_note, adopted_from, forked_from, started_at, updated_at
) VALUES (
    @tenant_id, @id, @workarea_id, CAST(sqlc.arg(workarea_id_path)::text AS ltree), @name, @owner_principal_id,
    @owner_principal, @owner_key_id, @status, @handoff_note, @adopted_from, @forked_from, @started_at, @updated_at
)
ON CONFLICT (tenant_id, workarea_id, owner_principal_id, name) DO NOTHING;

-- name: SessionGet :one
SELECT * FROM sessions.sessions WHERE tenant_id = $1 AND id = $2;

-- name: SessionGetForUpdate :one
SELECT * FROM sessions.sessions WHERE tenant_id = $1 AND id = $2 FOR UPDATE;

-- name: SessionByOwnerNameForUpdate :one
SELECT * FROM sessions.sessions
WHERE tenant_id = @tenant_id AND workarea_id = @workarea_id AND owner_principal_id = @owner_principal_id AND name = @name
FOR UPDATE;

-- name: SessionUpdate :exec
UPDATE sessions.sessions SET
    name = @name, owner_principal_id = @owner_principal_id, owner_principal = @owner_principal,
    owner_key_id = @owner_key_id, status = @status, handoff_note = @handoff_note,
    adopted_from = @adopted_from, forked_from = @forked_from, updated_at = @updated_at,
    ended_at = @ended_at, ended_by_key_id = @ended_by_key_id
WHERE tenant_id = @tenant_id AND id = @id;

-- name: SessionsList :many
-- Sessions in the readable subtrees (allow minus deny), optionally under
-- one workarea and of one status, newest first, after a cursor.
SELECT * FROM sessions.sessions s
WHERE s.tenant_id = @tenant_id
  AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> s.workarea_id_path
  AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> s.workarea_id_path)
  AND (sqlc.arg(under)::text = '' OR s.workarea_id_path <@ (SELECT CAST(sqlc.arg(under)::text AS ltree)))
  AND (sqlc.arg(status)::text = '' OR s.status = sqlc.arg(status)::text)
  AND (sqlc.arg(after)::text = '' OR s.id < sqlc.arg(after)::text)
ORDER BY s.id DESC
LIMIT sqlc.arg(max_rows);

-- name: SessionsLatestOfOwner :many
-- A principal's sessions in one workarea, most recently active first.
SELECT * FROM sessions.sessions
WHERE tenant_id = @tenant_id AND workarea_id = @workarea_id AND owner_principal_id = @owner_principal_id
ORDER BY updated_at DESC, id DESC
LIMIT @max_rows;

-- name: SessionsOwned :many
-- The principal's sessions whose brains it may read (not pruned), most
-- recently active first (search confines brain hits to these).
SELECT id FROM sessions.sessions
WHERE tenant_id = $1 AND owner_principal_id = $2 AND status <> 'pruned'
ORDER BY updated_at DESC
LIMIT @max_rows;
