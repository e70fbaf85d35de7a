-- contexts/attachments: resumable upload sessions, content-addressed
-- sealed blobs, and the bindings of blobs to claims.
CREATE SCHEMA attachments;

-- An upload session: opened with its expected plaintext digest and size,
-- fed parts in order by any replica (the running SHA-256 state is saved
-- after every part), complete when the last part's digest matches.
CREATE TABLE attachments.sessions (
    tenant_id       text        NOT NULL,
    id              text        NOT NULL,
    key_id          text        NOT NULL,
    state           text        NOT NULL CHECK (state IN ('open', 'complete', 'aborted', 'expired')),
    media_type      text        NOT NULL,
    size_bytes      bigint      NOT NULL CHECK (size_bytes >= 0),
    expected_sha256 bytea       NOT NULL CHECK (length(expected_sha256) = 32),
    part_size       bigint      NOT NULL CHECK (part_size > 0),
    parts_received  integer     NOT NULL DEFAULT 0 CHECK (parts_received >= 0),
    bytes_received  bigint      NOT NULL DEFAULT 0 CHECK (bytes_received >= 0),
    hash_state      bytea,
    part_sha256     bytea[]     NOT NULL DEFAULT '{}',
    part_etags      text[]      NOT NULL DEFAULT '{}',
    -- The random id each stored part was sealed under (its nonces).
    part_writes     bigint[]    NOT NULL DEFAULT '{}',
    address         text        NOT NULL,
    object_key      text        NOT NULL,
    store_upload    text        NOT NULL,
    -- The object's data key, wrapped; it moves to attachments.blobs when
    -- the session completes and is cleared when the session ends otherwise.
    wrapped_key     bytea,
    -- One writer per session at a time, on any replica.
    lease_token     text,
    lease_until     timestamptz,
    reason          text,
    created_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    completed_at    timestamptz,
    -- A complete session binds to one claim; from then on the claim holds
    -- the content, not the session.
    bound_at        timestamptz,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX sessions_open_per_key ON attachments.sessions (tenant_id, key_id) WHERE state = 'open';
CREATE INDEX sessions_open_expiry ON attachments.sessions (expires_at) WHERE state = 'open';
CREATE INDEX sessions_by_address ON attachments.sessions (tenant_id, expected_sha256) WHERE state IN ('open', 'complete');

-- A stored object: one per (tenant, content). wrapped_key is the data key
-- sealed by the deployment's key-encryption key; deleting the row shreds
-- the object.
CREATE TABLE attachments.blobs (
    tenant_id     text        NOT NULL,
    sha256        bytea       NOT NULL CHECK (length(sha256) = 32),
    address       text        NOT NULL,
    object_key    text        NOT NULL,
    size_bytes    bigint      NOT NULL,
    part_size     bigint      NOT NULL,
    part_writes   bigint[]    NOT NULL,
    wrapped_key   bytea       NOT NULL,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, sha256)
);

-- Which claims carry which content, under which media type.
CREATE TABLE attachments.bindings (
    tenant_id   text   NOT NULL,
    artifact_id text   NOT NULL,
    sha256      bytea  NOT NULL,
    session_id  text   NOT NULL,
    media_type  text   NOT NULL,
    size_bytes  bigint NOT NULL,
    PRIMARY KEY (tenant_id, artifact_id, sha256),
    FOREIGN KEY (tenant_id, sha256) REFERENCES attachments.blobs (tenant_id, sha256)
);
CREATE INDEX bindings_by_blob ON attachments.bindings (tenant_id, sha256);

-- Objects (and abandoned multipart uploads) to remove from the store: the
-- database decides in its transaction, the sweeper acts after it, not
-- before not_before. A completion first records its object here (with a
-- grace period) and removes the row once the blob is recorded, so an
-- object completed by a writer that then failed is never lost track of.
CREATE TABLE attachments.doomed (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id    text        NOT NULL,
    object_key   text        NOT NULL,
    store_upload text,
    queued_at    timestamptz NOT NULL,
    not_before   timestamptz NOT NULL
);
CREATE INDEX doomed_due ON attachments.doomed (not_before);
