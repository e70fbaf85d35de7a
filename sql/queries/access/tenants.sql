-- name: TenantInsert :exec
INSERT INTO access.tenants (id, name) VALUES ($1, $2);

-- name: TenantEpoch :one
SELECT permission_epoch FROM access.tenants WHERE id = $1;

-- name: TenantEpochBump :one
UPDATE access.tenants SET permission_epoch = permission_epoch + 1 WHERE id = $1
RETURNING permission_epoch;
