-- name: EdgeInsert :exec
INSERT INTO lineage.edges (
    tenant_id, id, kind, label, from_id, to_id, from_id_path, to_id_path, note, state,
    proposer_key_id, proposer_principal, proposed_at
) VALUES (
    @tenant_id, @id, @kind, @label, @from_id, @to_id,
    CAST(sqlc.arg(from_id_path)::text AS ltree), CAST(sqlc.arg(to_id_path)::text AS ltree),
    @note, 'pending', @proposer_key_id, @proposer_principal, @proposed_at
);

-- name: EdgeGetForUpdate :one
SELECT * FROM lineage.edges WHERE tenant_id = $1 AND id = $2 FOR UPDATE;

-- name: EdgesQueue :many
-- Pending edges a reviewer may ratify: both endpoints inside its review
-- subtrees, not proposed by its principal, not leased now; oldest first.
SELECT * FROM lineage.edges e
WHERE e.tenant_id = @tenant_id AND e.state = 'pending'
  AND e.proposer_principal <> @principal
  AND (e.leased_until IS NULL OR e.leased_until <= @now)
  AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> e.from_id_path
  AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> e.to_id_path
  AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> e.from_id_path)
  AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> e.to_id_path)
  AND NOT (e.id = ANY(sqlc.arg(skip)::text[]))
ORDER BY e.proposed_at
LIMIT 1
FOR UPDATE OF e SKIP LOCKED;

-- name: EdgesQueueCounts :many
-- Pending edges a reviewer could ratify, per the workarea of their from
-- endpoint (the last label of its id path: the id's suffix); leased ones
-- counted apart.
SELECT subpath(e.from_id_path, -1)::text AS from_label,
       count(*)::bigint AS waiting,
       (count(*) FILTER (WHERE e.leased_until > @now))::bigint AS leased,
       min(e.proposed_at)::timestamptz AS oldest
FROM lineage.edges e
WHERE e.tenant_id = @tenant_id AND e.state = 'pending'
  AND e.proposer_principal <> @principal
  AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> e.from_id_path
  AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> e.to_id_path
  AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> e.from_id_path)
  AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> e.to_id_path)
GROUP BY 1;

-- name: EdgeLease :exec
UPDATE lineage.edges SET leased_until = $3 WHERE tenant_id = $1 AND id = $2;

-- name: EdgeLeaseClear :exec
-- A released serve gives the pending edge back to the queue: only its own
-- lease (the serve's expiry), never one another reviewer has taken since.
UPDATE lineage.edges SET leased_until = NULL
WHERE tenant_id = @tenant_id AND id = @id AND state = 'pending' AND leased_until = @lease;

-- name: EdgeDecide :exec
UPDATE lineage.edges SET state = $3, decided_at = $4, decided_by = $5, leased_until = NULL
WHERE tenant_id = $1 AND id = $2;

-- name: EdgesTouching :many
-- Claim edges (pending or ratified) with an endpoint among ids, ordered
-- (a continued graph read walks the same way again).
SELECT * FROM lineage.edges
WHERE tenant_id = @tenant_id AND kind = 'claim' AND state <> 'rejected'
  AND (from_id = ANY(@ids::text[]) OR to_id = ANY(@ids::text[]))
ORDER BY id;

-- name: WorkareaEdgesFrom :many
-- A workarea's edges (pending or ratified) for oml_workarea_info.
SELECT * FROM lineage.edges
WHERE tenant_id = $1 AND kind = 'workarea' AND state <> 'rejected' AND from_id = $2
ORDER BY proposed_at;
