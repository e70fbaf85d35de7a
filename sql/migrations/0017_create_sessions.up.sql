-- contexts/sessions: agent work sessions, their handoff notes and
-- lineage, and each key's active session per workarea.
CREATE SCHEMA sessions;

-- A work session. It belongs to a principal (the agent identity behind its
-- keys), not to one key, so a rotated key resumes its principal's session.
CREATE TABLE sessions.sessions (
    tenant_id          text        NOT NULL,
    id                 text        NOT NULL,
    workarea_id        text        NOT NULL,
    -- The workarea's id path (ids never move), so a listing is confined to
    -- the caller's readable subtrees in SQL.
    workarea_id_path   ltree       NOT NULL,
    name               text        NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
    owner_principal_id text        NOT NULL,
    owner_principal    text        NOT NULL,
    -- The key that last took the session (start, adopt, fork, reassign).
    owner_key_id       text        NOT NULL,
    status             text        NOT NULL CHECK (status IN ('running', 'ended')),
    handoff_note       text        NOT NULL DEFAULT '',
    -- Lineage: the principal an adoption took the session from (the id
    -- stays), and the session a fork copied.
    adopted_from       text,
    forked_from        text,
    started_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    ended_at           timestamptz,
    ended_by_key_id    text,
    PRIMARY KEY (tenant_id, id),
    -- A name is unique per owner inside a workarea: two agents choosing the
    -- same name get two sessions (seed 002, session ownership).
    CONSTRAINT sessions_owner_name UNIQUE (tenant_id, workarea_id, owner_principal_id, name)
);
-- session_list walks a tenant's sessions newest first (ids are ULIDs).
CREATE INDEX sessions_by_tenant ON sessions.sessions (tenant_id, id DESC);
CREATE INDEX sessions_by_path ON sessions.sessions USING gist (workarea_id_path);

-- The caller's active session per (key, workarea): the transport is
-- stateless, so tools that default to "the active session" read it here.
CREATE TABLE sessions.active (
    tenant_id   text        NOT NULL,
    key_id      text        NOT NULL,
    workarea_id text        NOT NULL,
    session_id  text        NOT NULL,
    set_at      timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, key_id, workarea_id),
    FOREIGN KEY (tenant_id, session_id) REFERENCES sessions.sessions (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX active_by_session ON sessions.active (tenant_id, session_id);
