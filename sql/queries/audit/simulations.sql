-- name: SimulationInsert :execrows
INSERT INTO audit.simulations (tenant_id, id, workarea_id, workarea_id_path, name, created_by, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (tenant_id, name) DO NOTHING;

-- name: SimulationAudienceAdd :exec
INSERT INTO audit.simulation_audience (tenant_id, simulation_id, key_id) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING;

-- name: SimulationGetForUpdate :one
SELECT * FROM audit.simulations WHERE tenant_id = $1 AND id = $2 FOR UPDATE;

-- name: SimulationEnd :exec
UPDATE audit.simulations SET ended_at = $3, ended_by = $4 WHERE tenant_id = $1 AND id = $2;

-- name: SimulationsList :many
SELECT s.*, COALESCE(array_agg(a.key_id ORDER BY a.key_id) FILTER (WHERE a.key_id IS NOT NULL), '{}')::text[] AS audience
FROM audit.simulations s
LEFT JOIN audit.simulation_audience a ON a.tenant_id = s.tenant_id AND a.simulation_id = s.id
WHERE s.tenant_id = $1
GROUP BY s.tenant_id, s.id
ORDER BY s.created_at, s.id;

-- name: SimulationsOfKey :many
-- The simulations whose audience holds a key: its read fence (D10).
SELECT simulation_id FROM audit.simulation_audience WHERE tenant_id = $1 AND key_id = $2 ORDER BY simulation_id;

-- name: SimulationForKey :one
-- A simulation as a write by a key of its audience needs it. FOR SHARE
-- waits for an end being committed, so no write carries an ended one.
SELECT s.workarea_id, s.workarea_id_path, s.ended_at FROM audit.simulations s
JOIN audit.simulation_audience a ON a.tenant_id = s.tenant_id AND a.simulation_id = s.id
WHERE s.tenant_id = $1 AND s.id = $2 AND a.key_id = $3
FOR SHARE OF s;
