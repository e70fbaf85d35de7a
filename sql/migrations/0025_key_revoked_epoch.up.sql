-- The permission epoch a key's revocation bumped, so a grant listing at an
-- epoch knows whether the key was live then. Keys revoked before this
-- migration take it from the journal's key.revoke event. Grants of the
-- bootstrap (made before 0021 stamped epochs at creation) take theirs
-- from the journal too.
ALTER TABLE access.keys ADD COLUMN revoked_epoch bigint;

UPDATE access.keys k SET revoked_epoch = (e.payload->>'permission_epoch')::bigint
FROM platform.journal_events e
WHERE e.tenant_id = k.tenant_id AND e.event_type = 'key.revoke' AND e.subject->>'key_id' = k.id;

UPDATE access.grants g SET created_epoch = (e.payload->>'permission_epoch')::bigint
FROM platform.journal_events e
WHERE g.created_epoch IS NULL
  AND e.tenant_id = g.tenant_id AND e.event_type = 'grant.add' AND e.subject->>'grant_id' = g.id;
