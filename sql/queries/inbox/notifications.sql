-- name: NotifyProbe :one
-- The trailer's cheap path: whether the principal has a resolved item
-- above its attention cursor, and whether it has any subscription.
SELECT
    EXISTS (
        SELECT 1 FROM inbox.items i
        WHERE i.tenant_id = @tenant_id AND i.asker_principal_id = @principal_id AND i.status <> 'open'
          AND i.seq > COALESCE((SELECT c.seq FROM inbox.attention_cursors c
                                WHERE c.tenant_id = @tenant_id AND c.principal_id = @principal_id), 0)
    )::boolean AS attention,
    EXISTS (
        SELECT 1 FROM inbox.subscriptions s WHERE s.tenant_id = @tenant_id AND s.principal_id = @principal_id
    )::boolean AS subscribed;

-- name: AttentionCursorEnsure :exec
INSERT INTO inbox.attention_cursors (tenant_id, principal_id, seq, updated_at)
VALUES (@tenant_id, @principal_id, 0, @updated_at)
ON CONFLICT (tenant_id, principal_id) DO NOTHING;

-- name: AttentionCursorLock :one
-- Locks the cursor for the rest of the unit of work, so two concurrent
-- drains never deliver one item twice.
SELECT seq FROM inbox.attention_cursors WHERE tenant_id = @tenant_id AND principal_id = @principal_id FOR UPDATE;

-- name: AttentionCursorSet :exec
UPDATE inbox.attention_cursors SET seq = @seq, updated_at = @updated_at
WHERE tenant_id = @tenant_id AND principal_id = @principal_id;

-- name: ItemsResolvedForAsker :many
SELECT * FROM inbox.items
WHERE tenant_id = @tenant_id AND asker_principal_id = @principal_id AND status <> 'open' AND seq > @after_seq
ORDER BY seq
LIMIT @max_rows;

-- name: SubscriptionInsert :exec
INSERT INTO inbox.subscriptions (tenant_id, id, principal_id, kinds, workarea_id, workarea_id_path, actor, drop_own, seq, created_at)
VALUES (@tenant_id, @id, @principal_id, @kinds, @workarea_id, @workarea_id_path, @actor, @drop_own, @seq, @created_at);

-- name: SubscriptionDelete :execrows
DELETE FROM inbox.subscriptions WHERE tenant_id = @tenant_id AND id = @id AND principal_id = @principal_id;

-- name: SubscriptionsByOwner :many
SELECT * FROM inbox.subscriptions WHERE tenant_id = @tenant_id AND principal_id = @principal_id ORDER BY created_at, id;

-- name: SubscriptionsByOwnerForUpdate :many
-- A drain locks its subscriptions' cursors until it commits.
SELECT * FROM inbox.subscriptions WHERE tenant_id = @tenant_id AND principal_id = @principal_id ORDER BY created_at, id FOR UPDATE;

-- name: SubscriptionCursorSet :exec
UPDATE inbox.subscriptions SET seq = @seq WHERE tenant_id = @tenant_id AND id = @id;
