-- The inbox context: questions and approvals on the human (open items with
-- optional deadlines), the durable feed cursors, and the per-workarea feed
-- event counter behind OML_EVENTS_PER_WORKAREA. Feed events themselves are
-- journal events (platform.journal_events): the feed is a view of the
-- journal, never a second log.
CREATE SCHEMA inbox;

CREATE TABLE inbox.items (
    tenant_id          text        NOT NULL,
    -- The journal event id of the question or approval: an item is its own
    -- event (seed 002: question_id = event_id = thread_id).
    id                 text        NOT NULL,
    kind               text        NOT NULL CHECK (kind IN ('question', 'approval')),
    workarea_id        text        NOT NULL,
    workarea_id_path   text        NOT NULL,
    asker_key_id       text        NOT NULL,
    asker_principal_id text        NOT NULL,
    asker_principal    text        NOT NULL,
    body               text        NOT NULL,
    options            jsonb,
    created_at         timestamptz NOT NULL,
    expires_at         timestamptz,
    -- approve | decline, approvals with a deadline only.
    on_expiry          text CHECK (on_expiry IN ('approve', 'decline')),
    status             text        NOT NULL DEFAULT 'open'
        CHECK (status IN ('open', 'answered', 'approved', 'declined', 'expired')),
    resolved_at        timestamptz,
    -- A principal's name, or 'hub' for a resolution at the deadline.
    resolved_by        text,
    resolution_body    text,
    expired            boolean     NOT NULL DEFAULT false,
    answer_event_id    text,
    -- The journal seq of the item's last change: the inbox cursor orders
    -- on it, so a resolved item comes back after the cursor it was read at.
    seq                bigint      NOT NULL,
    PRIMARY KEY (tenant_id, id),
    CHECK ((status = 'open') = (resolved_at IS NULL))
);

-- The sweeper's and the settling read's scan: open items by deadline.
CREATE INDEX items_due ON inbox.items (expires_at) WHERE status = 'open' AND expires_at IS NOT NULL;
-- The open-items cap per (principal, workarea).
CREATE INDEX items_open_by_asker ON inbox.items (tenant_id, asker_principal_id, workarea_id) WHERE status = 'open';
-- inbox_read pages in cursor order.
CREATE INDEX items_by_seq ON inbox.items (tenant_id, seq);

-- One durable feed cursor per (principal, workarea): keyed on the resolved
-- actor, never the key, so a rotated key resumes where its identity stopped.
CREATE TABLE inbox.feed_cursors (
    tenant_id    text        NOT NULL,
    principal_id text        NOT NULL,
    workarea_id  text        NOT NULL,
    seq          bigint      NOT NULL CHECK (seq >= 0),
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, principal_id, workarea_id)
);

-- Feed events written per workarea, against OML_EVENTS_PER_WORKAREA. The
-- row is locked by its increment, so concurrent writers never pass the cap.
CREATE TABLE inbox.workarea_events (
    tenant_id   text   NOT NULL,
    workarea_id text   NOT NULL,
    events      bigint NOT NULL CHECK (events >= 0),
    PRIMARY KEY (tenant_id, workarea_id)
);

-- The feed reads one workarea's journal events in seq order; without this
-- index it would scan the tenant's whole journal.
CREATE INDEX journal_events_by_workarea ON platform.journal_events (tenant_id, workarea_id, seq) WHERE workarea_id IS NOT NULL;
