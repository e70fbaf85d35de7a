-- contexts/admission: the principals that gave a held artifact a verdict,
-- on the artifact itself. The review queue left out items the reviewer's
-- principal already judged with a NOT EXISTS over admission.serves; its
-- plan depended on how fresh the statistics of serves were for the
-- tenant. With a tenant's serves missing from them (a new or fast-growing
-- tenant, before autovacuum analyses the table) it scanned all of the
-- tenant's serves once per candidate, so a serve cost more with every
-- verdict (docs/BENCHMARKS.md, "Serve + verdict"). Now the queue and the
-- lease read one table.
--
-- A trigger keeps the column: whatever records a verdict on a serve of an
-- artifact (this release's ServeDecide, or an older replica's still
-- running while an upgrade rolls out) appends the reviewer's principal in
-- the same transaction. The verdict itself still checks admission.serves
-- (R2: one identity's verdict counts once), so R2 never rests on it.
ALTER TABLE admission.artifacts ADD COLUMN judged_by text[] NOT NULL DEFAULT '{}';

CREATE FUNCTION admission.serves_record_judge() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.artifact_id IS NOT NULL AND NEW.verdict IS NOT NULL AND OLD.verdict IS NULL THEN
        UPDATE admission.artifacts
        SET judged_by = array_append(judged_by, NEW.reviewer_principal)
        WHERE tenant_id = NEW.tenant_id AND id = NEW.artifact_id
          AND NOT (NEW.reviewer_principal = ANY(judged_by));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER serves_record_judge AFTER UPDATE OF verdict ON admission.serves
    FOR EACH ROW EXECUTE FUNCTION admission.serves_record_judge();

-- Only held items are ever queued again, so only they need their past
-- verdicts (a backlog's worth of rows, not the table's history).
UPDATE admission.artifacts a SET judged_by = j.principals
FROM (
    SELECT s.tenant_id, s.artifact_id, array_agg(DISTINCT s.reviewer_principal ORDER BY s.reviewer_principal) AS principals
    FROM admission.serves s
    JOIN admission.artifacts x ON x.tenant_id = s.tenant_id AND x.id = s.artifact_id AND x.state = 'held'
    WHERE s.verdict IS NOT NULL
    GROUP BY s.tenant_id, s.artifact_id
) j
WHERE a.tenant_id = j.tenant_id AND a.id = j.artifact_id;
