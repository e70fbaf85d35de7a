-- name: VersionInsert :exec
INSERT INTO knowledge.versions (tenant_id, artifact_id, workarea_id, path, source_session, stale_after, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: VersionsByIDs :many
SELECT * FROM knowledge.versions WHERE tenant_id = $1 AND artifact_id = ANY(@ids::text[]);
