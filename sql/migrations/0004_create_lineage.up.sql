-- contexts/lineage: declared derives_from between artifacts. Claim and
-- workarea edges join it with the edge proposals.
CREATE SCHEMA lineage;

CREATE TABLE lineage.derivations (
    tenant_id   text        NOT NULL,
    artifact_id text        NOT NULL,
    target_id   text        NOT NULL,
    declared_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, artifact_id, target_id),
    CHECK (artifact_id <> target_id)
);
-- Walking the graph towards descendants (who derives from X).
CREATE INDEX derivations_target ON lineage.derivations (tenant_id, target_id);
