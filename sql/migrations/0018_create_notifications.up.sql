-- Notifications (seed 002, "Notifications on tool results"): what the
-- trailer on every successful tool result has already shown each
-- principal. Both cursors are journal seqs, keyed on the resolved actor
-- (the principal), never the key, so a rotated key is not re-notified.

-- The attention cursor: the seq of the last resolution of the caller's own
-- questions and approvals that a trailer delivered.
CREATE TABLE inbox.attention_cursors (
    tenant_id    text        NOT NULL,
    principal_id text        NOT NULL,
    seq          bigint      NOT NULL CHECK (seq >= 0),
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, principal_id)
);

-- Standing interests in feed events, each with its own cursor.
CREATE TABLE inbox.subscriptions (
    tenant_id        text        NOT NULL,
    id               text        NOT NULL,
    principal_id     text        NOT NULL,
    -- Seed 002's kind families; the app refuses anything else.
    kinds            text[]      NOT NULL CHECK (cardinality(kinds) > 0),
    -- Optional scope: the workarea and its subtree (its id path at
    -- subscription time); NULL is every workarea the owner reads.
    workarea_id      text,
    workarea_id_path text,
    -- Optional actor filter: a principal name or a key id.
    actor            text,
    drop_own         boolean     NOT NULL DEFAULT false,
    seq              bigint      NOT NULL CHECK (seq >= 0),
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id),
    CHECK ((workarea_id IS NULL) = (workarea_id_path IS NULL))
);

-- The trailer reads one principal's subscriptions on every call.
CREATE INDEX subscriptions_by_owner ON inbox.subscriptions (tenant_id, principal_id);

-- The trailer's attention probe: an asker's resolved items in cursor
-- order, so the no-pending path is one index lookup.
CREATE INDEX items_resolved_by_asker ON inbox.items (tenant_id, asker_principal_id, seq) WHERE status <> 'open';
