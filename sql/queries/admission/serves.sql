-- name: ServeInsert :exec
INSERT INTO admission.serves (
    tenant_id, id, artifact_id, edge_id, reviewer_key_id, reviewer_principal, self_signed, served_at, expires_at, closure
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10);

-- name: ServeGetForUpdate :one
SELECT * FROM admission.serves WHERE tenant_id = $1 AND id = $2 FOR UPDATE;

-- name: ServeDecide :exec
-- The verdict, with the closure and self-signed mark it re-checked.
UPDATE admission.serves SET consumed_at = $3, verdict = $4, reason = $5, closure = @closure, self_signed = @self_signed
WHERE tenant_id = $1 AND id = $2;

-- name: ServeJudgedBy :one
-- Whether a principal already gave an artifact a verdict (through any of
-- its keys): one identity never counts twice.
SELECT EXISTS (
    SELECT 1 FROM admission.serves
    WHERE tenant_id = @tenant_id AND artifact_id = @artifact_id AND reviewer_principal = @principal
      AND verdict IS NOT NULL
);

-- name: ServeLive :one
-- Whether a key holds an unexpired, undecided serve of an artifact: the
-- reviewer may read what it is reviewing, attachments included.
SELECT EXISTS (
    SELECT 1 FROM admission.serves
    WHERE tenant_id = @tenant_id AND artifact_id = @artifact_id AND reviewer_key_id = @key_id
      AND consumed_at IS NULL AND expires_at > @now
);

-- name: ServeRelease :exec
-- A reviewer gives a serve back: consumed without a verdict.
UPDATE admission.serves SET consumed_at = @now WHERE tenant_id = @tenant_id AND id = @id;
