-- name: BrainGet :one
SELECT path, content, version, octet_length(content)::bigint AS size_bytes, updated_at
FROM sessions.brain_entries WHERE tenant_id = $1 AND session_id = $2 AND path = $3;

-- name: BrainVersion :one
-- The version stored at a path (the conditional write's comparison).
SELECT version FROM sessions.brain_entries WHERE tenant_id = $1 AND session_id = $2 AND path = $3;

-- name: BrainPut :exec
INSERT INTO sessions.brain_entries (tenant_id, session_id, path, content, version, updated_at, updated_by)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (tenant_id, session_id, path) DO UPDATE
SET content = EXCLUDED.content, version = EXCLUDED.version, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by;

-- name: BrainDelete :execrows
DELETE FROM sessions.brain_entries WHERE tenant_id = $1 AND session_id = $2 AND path = $3;

-- name: BrainUsage :one
-- One brain's entries and bytes, and the bytes stored at one path, for
-- its bounds.
SELECT count(*)::bigint AS entries, coalesce(sum(octet_length(content)), 0)::bigint AS bytes,
       coalesce(sum(octet_length(content)) FILTER (WHERE path = @path::text), 0)::bigint AS at_path
FROM sessions.brain_entries WHERE tenant_id = @tenant_id AND session_id = @session_id;

-- name: BrainList :many
-- A brain's entries under a prefix, in path order after a cursor path.
SELECT path, version, octet_length(content)::bigint AS size_bytes, updated_at
FROM sessions.brain_entries
WHERE tenant_id = @tenant_id AND session_id = @session_id
  AND starts_with(path, @prefix::text) AND path > @after::text
ORDER BY path
LIMIT @max_rows;

-- name: BrainCopy :execrows
-- A fork's brain: a copy of the source's, taken in the fork's unit of work.
INSERT INTO sessions.brain_entries (tenant_id, session_id, path, content, version, updated_at, updated_by)
SELECT b.tenant_id, @to_session::text, b.path, b.content, b.version, b.updated_at, b.updated_by
FROM sessions.brain_entries b WHERE b.tenant_id = @tenant_id::text AND b.session_id = @from_session::text;

-- name: BrainDrop :execrows
-- A pruned session's brain goes.
DELETE FROM sessions.brain_entries WHERE tenant_id = $1 AND session_id = $2;
