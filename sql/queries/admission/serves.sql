-- name: ServeInsert :exec
INSERT INTO admission.serves (
    tenant_id, id, artifact_id, edge_id, reviewer_key_id, reviewer_principal, self_signed, served_at, expires_at, closure
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10);

-- name: ServeGetForUpdate :one
SELECT * FROM admission.serves WHERE tenant_id = $1 AND id = $2 FOR UPDATE;

-- name: ServeDecide :exec
-- The verdict, with the closure and self-signed mark it re-checked. The
-- trigger serves_record_judge (migration 0042) adds the reviewer's
-- principal to the artifact's judged_by in the same transaction.
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

-- name: EvidenceServes :many
-- The serves of claims in a subtree served in a time range, with their
-- verdicts, for the evidence export.
SELECT s.id, s.artifact_id, s.reviewer_key_id, s.reviewer_principal, s.self_signed, s.served_at, s.expires_at,
       s.consumed_at, s.verdict, s.reason, s.closure, a.author_principal
FROM admission.serves s
JOIN admission.artifacts a ON a.tenant_id = s.tenant_id AND a.id = s.artifact_id
WHERE s.tenant_id = @tenant_id AND a.workarea_id = ANY(@workareas::text[]) AND (a.simulation_id IS NULL OR a.simulation_id = ANY(@fence::text[]))
  AND s.served_at >= @from_at AND s.served_at <= @to_at
ORDER BY s.served_at, s.id
LIMIT @max_rows;
