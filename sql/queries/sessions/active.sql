-- name: ActiveSet :exec
INSERT INTO sessions.active (tenant_id, key_id, workarea_id, session_id, set_at)
VALUES (@tenant_id, @key_id, @workarea_id, @session_id, @set_at)
ON CONFLICT (tenant_id, key_id, workarea_id) DO UPDATE SET session_id = EXCLUDED.session_id, set_at = EXCLUDED.set_at;

-- name: ActiveOfKey :many
-- The key's active sessions, one per workarea, most recently set first.
SELECT * FROM sessions.active WHERE tenant_id = $1 AND key_id = $2 ORDER BY set_at DESC, workarea_id;

-- name: ActiveClear :exec
-- No key keeps a pointer to a session that ended or changed hands.
DELETE FROM sessions.active WHERE tenant_id = $1 AND session_id = $2;
