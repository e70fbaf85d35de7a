-- name: VersionInsert :exec
INSERT INTO knowledge.versions (tenant_id, artifact_id, workarea_id, path, source_session, stale_after, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: VersionsByIDs :many
SELECT * FROM knowledge.versions WHERE tenant_id = $1 AND artifact_id = ANY(@ids::text[]);

-- name: StaleCandidates :many
-- A workarea's page versions past their stale_after, the longest overdue
-- first (whether each is still its page's head is admission's to say).
SELECT artifact_id, path, stale_after FROM knowledge.versions
WHERE tenant_id = $1 AND workarea_id = $2 AND stale_after IS NOT NULL AND stale_after <= @now
ORDER BY stale_after, artifact_id
LIMIT @max_rows;
