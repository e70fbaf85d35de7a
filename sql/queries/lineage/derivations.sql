-- name: DerivationsInsert :exec
INSERT INTO lineage.derivations (tenant_id, artifact_id, target_id, declared_at)
SELECT @tenant_id, @artifact_id, t, @declared_at FROM unnest(@targets::text[]) AS t
ON CONFLICT DO NOTHING;

-- name: DerivationsClosure :many
-- Everything an artifact derives from, transitively (UNION stops cycles).
WITH RECURSIVE up(id) AS (
    SELECT d.target_id FROM lineage.derivations d WHERE d.tenant_id = @tenant_id AND d.artifact_id = @artifact_id
    UNION
    SELECT d.target_id FROM lineage.derivations d JOIN up ON d.tenant_id = @tenant_id AND d.artifact_id = up.id
)
SELECT id::text FROM up LIMIT @max_rows;

-- name: DerivationsOf :many
SELECT target_id FROM lineage.derivations WHERE tenant_id = $1 AND artifact_id = $2 ORDER BY target_id;
