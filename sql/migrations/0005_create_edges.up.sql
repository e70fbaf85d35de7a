-- contexts/lineage: proposed edges between claims and between workareas.
-- An edge confers nothing until a dreamer(review) key on both endpoints
-- that is not the proposer ratifies it through the serve ceremony (R2).
CREATE TABLE lineage.edges (
    tenant_id          text        NOT NULL,
    id                 text        NOT NULL,
    kind               text        NOT NULL CHECK (kind IN ('claim', 'workarea')),
    label              text        NOT NULL,
    from_id            text        NOT NULL,
    to_id              text        NOT NULL,
    -- Id paths of the endpoints' workareas, so review subtrees filter here.
    from_id_path       ltree       NOT NULL,
    to_id_path         ltree       NOT NULL,
    note               text,
    state              text        NOT NULL CHECK (state IN ('pending', 'ratified', 'rejected')),
    proposer_key_id    text        NOT NULL,
    proposer_principal text        NOT NULL,
    proposed_at        timestamptz NOT NULL,
    decided_at         timestamptz,
    decided_by         text,
    -- The lease of the open serve (see admission.artifacts.leased_until).
    leased_until       timestamptz,
    PRIMARY KEY (tenant_id, id),
    CHECK (from_id <> to_id),
    CHECK (kind <> 'workarea' OR label IN ('relates_to', 'continues', 'derived_from', 'mirrors'))
);
-- One live proposal per (from, to, label).
CREATE UNIQUE INDEX edges_one_live ON lineage.edges (tenant_id, kind, from_id, to_id, label) WHERE state <> 'rejected';
CREATE INDEX edges_from ON lineage.edges (tenant_id, from_id);
CREATE INDEX edges_to ON lineage.edges (tenant_id, to_id);
CREATE INDEX edges_pending ON lineage.edges (tenant_id, proposed_at) WHERE state = 'pending';
