-- The shared kernel: extensions every context relies on, the per-tenant
-- hash-chained journal and idempotency records.
CREATE EXTENSION IF NOT EXISTS ltree;
CREATE EXTENSION IF NOT EXISTS vector;

CREATE SCHEMA platform;

-- One row per tenant: the chain's head. Appends lock this row with
-- UPDATE … RETURNING, which serialises writers per tenant and yields the
-- previous hash from the row version they locked (a sibling CTE would read
-- the statement snapshot instead and break links under concurrency).
CREATE TABLE platform.journal_heads (
    tenant_id text PRIMARY KEY,
    seq       bigint NOT NULL CHECK (seq >= 0),
    hash      bytea  NOT NULL CHECK (length(hash) = 32)
);

CREATE TABLE platform.journal_events (
    tenant_id   text        NOT NULL,
    seq         bigint      NOT NULL CHECK (seq > 0),
    event_id    text        NOT NULL UNIQUE,
    event_type  text        NOT NULL,
    at          timestamptz NOT NULL,
    actor       text        NOT NULL,
    workarea_id text,
    subject     jsonb       NOT NULL,
    payload     jsonb       NOT NULL,
    prev_hash   bytea       NOT NULL CHECK (length(prev_hash) = 32),
    hash        bytea       NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (tenant_id, seq)
);

-- Scoped to (key, workarea, operation) as D13 says; workarea is '' for
-- tenant-level operations so the key stays a plain primary key.
CREATE TABLE platform.idempotency_records (
    tenant_id       text        NOT NULL,
    key_id          text        NOT NULL,
    workarea        text        NOT NULL,
    operation       text        NOT NULL,
    idempotency_key text        NOT NULL,
    request_hash    bytea       NOT NULL,
    -- NULL only inside the claiming transaction; it commits with the write.
    -- json, not jsonb: a replay returns the very bytes first sent.
    response        json,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, key_id, workarea, operation, idempotency_key)
);
