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

-- name: WorkareasReadable :many
-- The workareas inside the allowed subtrees and outside the denied ones,
-- in tree order (id path: a parent before its children), after the
-- workarea after_id.
SELECT w.* FROM access.workareas w
WHERE w.tenant_id = @tenant_id
  AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> w.id_path
  AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> w.id_path)
  AND (@after_id::text = '' OR w.id_path > (
        SELECT a.id_path FROM access.workareas a
        WHERE a.tenant_id = @tenant_id AND a.id = @after_id::text
          AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> a.id_path
          AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> a.id_path)))
ORDER BY w.id_path
LIMIT @max_rows;
