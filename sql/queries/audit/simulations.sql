-- name: SimulationInsert :execrows
INSERT INTO audit.simulations (tenant_id, id, workarea_id, name, created_by, created_at)
VALUES ($1, $2, $3, $4, $5, $6)
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
