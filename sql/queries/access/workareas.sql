-- name: WorkareaInsert :exec
INSERT INTO access.workareas (tenant_id, id, parent_id, name, path, id_path, status, crew, created_at, updated_at)
VALUES (@tenant_id, @id, @parent_id, @name, @path, CAST(sqlc.arg(id_path)::text AS ltree), @status, @crew, @created_at, @created_at);

-- name: WorkareaByID :one
SELECT * FROM access.workareas
WHERE tenant_id = $1 AND id = $2;

-- name: WorkareasByIDs :many
SELECT * FROM access.workareas
WHERE tenant_id = $1 AND id = ANY(@ids::text[]);

-- name: WorkareaByIDForUpdate :one
SELECT * FROM access.workareas
WHERE tenant_id = $1 AND id = $2
FOR UPDATE;

-- name: WorkareaByPath :one
SELECT * FROM access.workareas
WHERE tenant_id = $1 AND path = $2;

-- name: WorkareaChildren :many
SELECT * FROM access.workareas
WHERE tenant_id = $1 AND parent_id = $2
ORDER BY name;

-- name: WorkareaUpdate :exec
UPDATE access.workareas SET status = $3, crew = $4, updated_at = $5
WHERE tenant_id = $1 AND id = $2;

-- name: WorkareaPaths :many
SELECT id, path FROM access.workareas WHERE tenant_id = $1 AND id = ANY(@ids::text[]);
