-- contexts/sessions: session brains, each session's private working state
-- (issue 15): entries under /fs/ (files) and /kv/ (key-value), one value
-- at most 4 MiB, each with the SHA-256 of its bytes as its version. Only
-- the session's owner reads and writes it; an adoption hands it over with
-- the session (same id), a fork copies it, a prune deletes it.
CREATE TABLE sessions.brain_entries (
    tenant_id  text        NOT NULL,
    session_id text        NOT NULL,
    path       text        NOT NULL CHECK (path ~ '^/(fs|kv)/.' AND octet_length(path) <= 512),
    content    bytea       NOT NULL CHECK (octet_length(content) <= 4194304),
    version    text        NOT NULL CHECK (version ~ '^sha256:[0-9a-f]{64}$'),
    updated_at timestamptz NOT NULL,
    -- The key that wrote this value.
    updated_by text        NOT NULL,
    PRIMARY KEY (tenant_id, session_id, path),
    FOREIGN KEY (tenant_id, session_id) REFERENCES sessions.sessions (tenant_id, id)
);
