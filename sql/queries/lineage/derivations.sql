-- name: DerivationsInsert :exec
INSERT INTO lineage.derivations (tenant_id, artifact_id, target_id, declared_at)
SELECT @tenant_id, @artifact_id, t, @declared_at FROM unnest(@targets::text[]) AS t
ON CONFLICT DO NOTHING;

-- name: DerivationsClosure :many
-- Everything an artifact derives from, transitively, and every claim a
-- claim edge joins it to, pending or ratified: an edge from the artifact
-- counts as one to it (so the claims with an edge into the artifact are
-- walked from too), and what those claims derive from or point at, again
-- transitively (UNION stops cycles). At most max_rows come back: the
-- caller asks for one more than it accepts, so a cut closure is detected,
-- never taken for a whole one (R2 fails closed).
WITH RECURSIVE up(id) AS (
    SELECT s.id FROM (
        SELECT @artifact_id::text AS id
        UNION
        SELECT e.from_id FROM lineage.edges e
        WHERE e.tenant_id = @tenant_id AND e.kind = 'claim' AND e.state <> 'rejected' AND e.to_id = @artifact_id::text
    ) s
    UNION
    SELECT n.id FROM up, LATERAL (
        SELECT d.target_id AS id FROM lineage.derivations d
        WHERE d.tenant_id = @tenant_id AND d.artifact_id = up.id
        UNION ALL
        SELECT e.to_id FROM lineage.edges e
        WHERE e.tenant_id = @tenant_id AND e.kind = 'claim' AND e.state <> 'rejected' AND e.from_id = up.id
    ) n
)
SELECT id::text FROM up WHERE id <> @artifact_id::text LIMIT @max_rows;

-- name: DerivationsClosures :many
-- DerivationsClosure for many roots at once: (root, member) pairs, at most
-- max_rows of them in all (the caller asks for one more than it accepts and
-- falls back to one root at a time when the cap is reached).
WITH RECURSIVE up(root, id) AS (
    SELECT s.root, s.id FROM (
        SELECT r AS root, r AS id FROM unnest(@roots::text[]) AS r
        UNION
        SELECT e.to_id, e.from_id FROM lineage.edges e
        WHERE e.tenant_id = @tenant_id AND e.kind = 'claim' AND e.state <> 'rejected' AND e.to_id = ANY(@roots::text[])
    ) s
    UNION
    SELECT up.root, n.id FROM up, LATERAL (
        SELECT d.target_id AS id FROM lineage.derivations d
        WHERE d.tenant_id = @tenant_id AND d.artifact_id = up.id
        UNION ALL
        SELECT e.to_id FROM lineage.edges e
        WHERE e.tenant_id = @tenant_id AND e.kind = 'claim' AND e.state <> 'rejected' AND e.from_id = up.id
    ) n
)
SELECT root::text, id::text FROM up WHERE id <> root LIMIT @max_rows;

-- name: DerivationsTouching :many
-- Derivations with an end among ids, for the graph read (ordered: a
-- continued graph read walks the same way again).
SELECT artifact_id, target_id FROM lineage.derivations
WHERE tenant_id = @tenant_id AND (artifact_id = ANY(@ids::text[]) OR target_id = ANY(@ids::text[]))
ORDER BY artifact_id, target_id;

-- name: DerivationsOf :many
SELECT target_id FROM lineage.derivations WHERE tenant_id = $1 AND artifact_id = $2 ORDER BY target_id;
