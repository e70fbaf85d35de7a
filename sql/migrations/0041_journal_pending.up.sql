-- Events written but not yet in their tenant's chain (D1, the sequencer in
-- platform/journal). A unit of work writes its events here in its own
-- transaction, without touching the tenant's head row; right after the
-- commit the sequencer moves every visible row of the tenant into
-- journal_events under one lock of the head, giving each its seq and hash
-- in id order. Writers no longer queue on the head for the rest of their
-- transaction, and one lock hold chains many transactions' events. Rows a
-- crash leaves here are chained by the next write to the tenant or by the
-- journal sweep.
CREATE TABLE platform.journal_pending (
    id          bigserial   PRIMARY KEY,
    tenant_id   text        NOT NULL,
    event_id    text        NOT NULL UNIQUE,
    event_type  text        NOT NULL,
    at          timestamptz NOT NULL,
    actor       text        NOT NULL,
    workarea_id text,
    subject     jsonb       NOT NULL,
    payload     jsonb       NOT NULL
);
CREATE INDEX journal_pending_tenant ON platform.journal_pending (tenant_id, id);
-- A queue: its pages are reused, never truncated under a lock (0038).
ALTER TABLE platform.journal_pending SET (vacuum_truncate = false);
