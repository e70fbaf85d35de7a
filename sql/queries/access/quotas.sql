-- name: QuotaSetTenant :exec
INSERT INTO access.quotas (tenant_id, key_id, writes_per_minute, updated_at, updated_by)
VALUES (@tenant_id, '', @writes_per_minute, @updated_at, @updated_by)
ON CONFLICT (tenant_id, key_id) DO UPDATE
SET writes_per_minute = EXCLUDED.writes_per_minute, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by;

-- name: QuotaSetKey :exec
INSERT INTO access.quotas (tenant_id, key_id, requests_per_minute, updated_at, updated_by)
VALUES (@tenant_id, @key_id, @requests_per_minute, @updated_at, @updated_by)
ON CONFLICT (tenant_id, key_id) DO UPDATE
SET requests_per_minute = EXCLUDED.requests_per_minute, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by;

-- name: QuotaClear :execrows
DELETE FROM access.quotas WHERE tenant_id = @tenant_id AND key_id = @key_id;

-- name: QuotasOf :many
SELECT key_id, writes_per_minute, requests_per_minute FROM access.quotas
WHERE tenant_id = $1 ORDER BY key_id;
