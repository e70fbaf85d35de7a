-- The session brief's stale pages: a workarea's page versions past their
-- stale_after, the longest overdue first.
CREATE INDEX versions_stale ON knowledge.versions (tenant_id, workarea_id, stale_after) WHERE stale_after IS NOT NULL;
