-- The evidence export reads a tenant's journal by time (GET /v1/evidence
-- ?from=&to=): the seq range of a time range.
CREATE INDEX journal_events_at ON platform.journal_events (tenant_id, at);
