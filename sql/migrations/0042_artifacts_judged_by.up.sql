-- contexts/admission: the principals whose verdict an artifact has, on the
-- artifact itself. The review queue left out items the reviewer's
-- principal already judged with a NOT EXISTS over admission.serves; its
-- plan depended on how fresh the statistics of serves were for the
-- tenant. With a tenant's serves missing from them (a new or fast-growing
-- tenant, before autovacuum analyses the table) it scanned all of the
-- tenant's serves once per candidate, so a serve cost more with every
-- verdict (docs/BENCHMARKS.md, "Serve + verdict"). Now the queue reads
-- one table in submission order and stops at its page. The verdict's
-- statement appends to this column (ServeDecide), so it changes when and
-- only when a serve of the artifact gets a verdict; the verdict still
-- checks admission.serves itself (R2: one identity counts once).
ALTER TABLE admission.artifacts ADD COLUMN judged_by text[] NOT NULL DEFAULT '{}';

UPDATE admission.artifacts a SET judged_by = j.principals
FROM (
    SELECT tenant_id, artifact_id, array_agg(DISTINCT reviewer_principal ORDER BY reviewer_principal) AS principals
    FROM admission.serves
    WHERE artifact_id IS NOT NULL AND verdict IS NOT NULL
    GROUP BY tenant_id, artifact_id
) j
WHERE a.tenant_id = j.tenant_id AND a.id = j.artifact_id;
