-- name: DocumentInsert :exec
INSERT INTO documents.documents (tenant_id, id, workarea_id, workarea_id_path, format, visibility, password_salt, password_hash,
    actor_principal, actor_key_id, session_id, created_at)
VALUES (@tenant_id, @id, @workarea_id, CAST(sqlc.arg(workarea_id_path)::text AS ltree), @format, @visibility, @password_salt, @password_hash,
    @actor_principal, @actor_key_id, @session_id, @created_at);

-- name: DocumentGet :one
SELECT tenant_id, id, workarea_id, workarea_id_path::text AS workarea_id_path, format, visibility, password_salt, password_hash,
       actor_principal, actor_key_id, session_id, created_at
FROM documents.documents WHERE tenant_id = $1 AND id = $2;

-- name: DocumentByID :one
-- A document by id alone (the viewer URL names no tenant).
SELECT tenant_id, id, workarea_id, workarea_id_path::text AS workarea_id_path, format, visibility, password_salt, password_hash,
       actor_principal, actor_key_id, session_id, created_at
FROM documents.documents WHERE id = $1;

-- name: DocumentsIn :many
-- A workarea's documents after a cursor (ids sort by time), optionally
-- one session's.
SELECT tenant_id, id, workarea_id, workarea_id_path::text AS workarea_id_path, format, visibility, password_salt, password_hash,
       actor_principal, actor_key_id, session_id, created_at
FROM documents.documents
WHERE tenant_id = @tenant_id AND workarea_id = @workarea_id AND id > @after
  AND (sqlc.narg(session_id)::text IS NULL OR session_id = sqlc.narg(session_id))
ORDER BY id
LIMIT @max_rows;

-- name: VersionInsert :exec
INSERT INTO documents.versions (tenant_id, document_id, artifact_id, title, description, label, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: VersionsByArtifacts :many
SELECT * FROM documents.versions WHERE tenant_id = $1 AND artifact_id = ANY(@ids::text[]);

-- name: DraftUpsert :exec
INSERT INTO documents.drafts (tenant_id, document_id, principal_id, content, updated_at)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (tenant_id, document_id, principal_id) DO UPDATE SET content = EXCLUDED.content, updated_at = EXCLUDED.updated_at;

-- name: DraftGet :one
SELECT * FROM documents.drafts WHERE tenant_id = $1 AND document_id = $2 AND principal_id = $3;

-- name: CommentInsert :exec
INSERT INTO documents.comments (tenant_id, id, document_id, revision, author_principal, author_key_id, body, anchor_offset, anchor_quote,
    delete_token_hash, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11);

-- name: CommentsOf :many
SELECT * FROM documents.comments WHERE tenant_id = $1 AND document_id = $2 ORDER BY created_at, id LIMIT @max_rows;

-- name: CommentGetForUpdate :one
SELECT * FROM documents.comments WHERE tenant_id = $1 AND id = $2 FOR UPDATE;

-- name: CommentResolve :exec
UPDATE documents.comments SET resolved_at = $3, resolved_by = $4 WHERE tenant_id = $1 AND id = $2;

-- name: CommentDelete :exec
DELETE FROM documents.comments WHERE tenant_id = $1 AND id = $2;

-- name: CommentCounts :many
-- Comments and unresolved comments per document, across every version.
SELECT document_id, count(*)::int AS total, (count(*) FILTER (WHERE resolved_at IS NULL))::int AS open
FROM documents.comments
WHERE tenant_id = $1 AND document_id = ANY(@ids::text[])
GROUP BY document_id;
