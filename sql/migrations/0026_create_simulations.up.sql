-- contexts/audit: simulations (D10). A simulation lives in a workarea's
-- subtree and has an audience of keys; rows written with its id are served
-- only to that audience. Ending one stops new writes and keeps its rows
-- fenced forever. The fence is a predicate on every read path
-- (contexts/audit/audiences.go answers who is in which audience).
CREATE SCHEMA audit;

CREATE TABLE audit.simulations (
    tenant_id   text        NOT NULL,
    id          text        NOT NULL,
    workarea_id text        NOT NULL,
    name        text        NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    created_by  text        NOT NULL,
    created_at  timestamptz NOT NULL,
    ended_by    text,
    ended_at    timestamptz,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, name)
);

CREATE TABLE audit.simulation_audience (
    tenant_id     text NOT NULL,
    simulation_id text NOT NULL,
    key_id        text NOT NULL,
    PRIMARY KEY (tenant_id, simulation_id, key_id),
    FOREIGN KEY (tenant_id, simulation_id) REFERENCES audit.simulations (tenant_id, id)
);
CREATE INDEX simulation_audience_key ON audit.simulation_audience (tenant_id, key_id);
