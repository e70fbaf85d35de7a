-- contexts/access: bans. A banned principal's submissions are refused at
-- admission; lifting a ban keeps the row, so the decision trail stays.
CREATE TABLE access.bans (
    tenant_id    text        NOT NULL,
    id           text        NOT NULL,
    principal_id text        NOT NULL,
    reason       text        NOT NULL,
    created_by   text        NOT NULL,
    created_at   timestamptz NOT NULL,
    lifted_by    text,
    lifted_at    timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, principal_id) REFERENCES access.principals (tenant_id, id)
);
CREATE UNIQUE INDEX bans_one_live ON access.bans (tenant_id, principal_id) WHERE lifted_at IS NULL;
