-- The permission epochs at which a grant took and lost effect, so an admin
-- can list the grants in force at any epoch (D7: effective access is
-- reproducible at a permission_epoch). Existing grants take theirs from
-- the journal's grant.add / grant.remove events, which carry them.
ALTER TABLE access.grants
    ADD COLUMN created_epoch bigint,
    ADD COLUMN removed_epoch bigint;

UPDATE access.grants g SET created_epoch = (e.payload->>'permission_epoch')::bigint
FROM platform.journal_events e
WHERE e.tenant_id = g.tenant_id AND e.event_type = 'grant.add' AND e.subject->>'grant_id' = g.id;

UPDATE access.grants g SET removed_epoch = (e.payload->>'permission_epoch')::bigint
FROM platform.journal_events e
WHERE e.tenant_id = g.tenant_id AND e.event_type = 'grant.remove' AND e.subject->>'grant_id' = g.id;

CREATE INDEX grants_key ON access.grants (tenant_id, key_id, id);
CREATE INDEX grants_workarea ON access.grants (tenant_id, workarea_id, id);
