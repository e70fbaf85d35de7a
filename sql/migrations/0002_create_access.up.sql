-- contexts/access: tenants, principals, keys, workareas and grants.
CREATE SCHEMA access;

CREATE TABLE access.tenants (
    id               text        PRIMARY KEY,
    name             text        NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    -- Bumped by every grant change, so effective access is reproducible
    -- from journalled grants at a stated epoch (D7).
    permission_epoch bigint      NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT now()
);

-- A principal is the identity review independence (R2) keys off; several
-- keys may share one (rotation).
CREATE TABLE access.principals (
    tenant_id  text        NOT NULL REFERENCES access.tenants (id),
    id         text        NOT NULL,
    name       text        NOT NULL CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, name)
);

CREATE TABLE access.keys (
    tenant_id    text        NOT NULL,
    id           text        NOT NULL,
    principal_id text        NOT NULL,
    role         text        NOT NULL CHECK (role IN ('reader', 'writer', 'dreamer', 'admin', 'operator')),
    -- The token is selector ‖ secret. The selector finds the row; only a
    -- SHA-256 of the secret is stored and it is compared in constant time.
    selector     bytea       NOT NULL UNIQUE,
    verifier     bytea       NOT NULL CHECK (length(verifier) = 32),
    created_by   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, principal_id) REFERENCES access.principals (tenant_id, id)
);

CREATE TABLE access.workareas (
    tenant_id  text        NOT NULL REFERENCES access.tenants (id),
    id         text        NOT NULL,
    parent_id  text,
    name       text        NOT NULL,
    -- Human path ("universe.procurement.metals-crew"). Names may hold '-',
    -- which PostgreSQL 15's ltree rejects, so the tree is indexed by id_path,
    -- an ltree of id suffixes that never changes.
    path       text        NOT NULL,
    id_path    ltree       NOT NULL,
    status     text        NOT NULL CHECK (status IN ('development', 'committed', 'validated')),
    crew       jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, path),
    FOREIGN KEY (tenant_id, parent_id) REFERENCES access.workareas (tenant_id, id),
    CHECK ((parent_id IS NULL) = (name = 'universe'))
);
-- Exactly one root per tenant.
CREATE UNIQUE INDEX workareas_one_root ON access.workareas (tenant_id) WHERE parent_id IS NULL;
CREATE INDEX workareas_id_path ON access.workareas USING gist (id_path);
CREATE INDEX workareas_parent ON access.workareas (tenant_id, parent_id);

CREATE TABLE access.grants (
    tenant_id   text        NOT NULL,
    id          text        NOT NULL,
    key_id      text        NOT NULL,
    workarea_id text        NOT NULL,
    scope       text        NOT NULL CHECK (scope IN ('reader', 'writer', 'dreamer.propose', 'dreamer.review', 'admin')),
    effect      text        NOT NULL CHECK (effect IN ('allow', 'deny')),
    created_by  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- Removed grants stay, so access at an old epoch can be recomputed.
    removed_by  text,
    removed_at  timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, key_id) REFERENCES access.keys (tenant_id, id),
    FOREIGN KEY (tenant_id, workarea_id) REFERENCES access.workareas (tenant_id, id)
);
CREATE UNIQUE INDEX grants_one_live ON access.grants (tenant_id, key_id, workarea_id, scope, effect) WHERE removed_at IS NULL;
CREATE INDEX grants_by_key ON access.grants (tenant_id, key_id) WHERE removed_at IS NULL;
