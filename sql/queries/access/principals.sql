-- name: PrincipalUpsert :one
-- Returns the principal of that name, creating it on first use. The no-op
-- update makes RETURNING yield the existing row.
INSERT INTO access.principals (tenant_id, id, name) VALUES ($1, $2, $3)
ON CONFLICT (tenant_id, name) DO UPDATE SET name = EXCLUDED.name
RETURNING id, name;
