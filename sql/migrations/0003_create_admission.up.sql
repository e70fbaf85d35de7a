-- contexts/admission: claims (one row per version: an artifact), review
-- policies, serves and verdicts.
CREATE SCHEMA admission;

CREATE TABLE admission.artifacts (
    tenant_id          text        NOT NULL,
    id                 text        NOT NULL,
    workarea_id        text        NOT NULL,
    -- The workarea's id path (ids never move), kept so scope filters run
    -- here without reading access's tables.
    workarea_id_path   ltree       NOT NULL,
    claim_key          text        NOT NULL,
    version            integer     NOT NULL CHECK (version >= 1),
    kind               text        NOT NULL CHECK (kind IN ('memory', 'derived_fact', 'steering')),
    verb               text        NOT NULL CHECK (verb IN ('remember', 'learn')),
    state              text        NOT NULL CHECK (state IN ('held', 'promoted', 'rejected', 'expired', 'demoted', 'erased')),
    -- NULL once erased: the tombstone keeps identity, not content.
    text               text,
    author_key_id      text        NOT NULL,
    author_principal   text        NOT NULL,
    supersedes         text,
    simulation_id      text,
    findings           jsonb       NOT NULL DEFAULT '[]',
    attachments        jsonb       NOT NULL DEFAULT '[]',
    envelope           jsonb       NOT NULL,
    signature          bytea       NOT NULL,
    required_approvals integer     NOT NULL CHECK (required_approvals >= 1),
    approvals          integer     NOT NULL DEFAULT 0,
    self_signed        boolean     NOT NULL DEFAULT false,
    submitted_at       timestamptz NOT NULL,
    held_expires_at    timestamptz NOT NULL,
    settled_at         timestamptz,
    promoted_at        timestamptz,
    -- The lease of the open serve, on the row itself: a reviewer's queue
    -- query that waited on this row's lock re-checks it after the lease
    -- commits, so one item is never leased twice.
    leased_until       timestamptz,
    PRIMARY KEY (tenant_id, id)
);
-- A claim key names one claim per workarea among non-erased rows; its
-- versions share it.
CREATE UNIQUE INDEX artifacts_claim_version ON admission.artifacts (tenant_id, workarea_id, claim_key, version)
    WHERE state <> 'erased';
-- The review queue: oldest held first.
CREATE INDEX artifacts_held ON admission.artifacts (tenant_id, submitted_at) WHERE state = 'held';
-- The expiry sweep across tenants.
CREATE INDEX artifacts_held_expiry ON admission.artifacts (held_expires_at) WHERE state = 'held';
-- oml_my_work: a key's own submissions, newest first.
CREATE INDEX artifacts_by_author ON admission.artifacts (tenant_id, author_key_id, id DESC);

CREATE TABLE admission.policies (
    tenant_id          text        NOT NULL,
    workarea_id        text        NOT NULL,
    workarea_id_path   ltree       NOT NULL,
    required_approvals integer     NOT NULL CHECK (required_approvals BETWEEN 1 AND 9),
    held_ttl_seconds   integer     NOT NULL CHECK (held_ttl_seconds > 0),
    scan_policy        text        NOT NULL CHECK (scan_policy IN ('flag', 'block')),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, workarea_id)
);
CREATE INDEX policies_path ON admission.policies USING gist (workarea_id_path);

CREATE TABLE admission.tenant_settings (
    tenant_id               text    PRIMARY KEY,
    self_signed_development boolean NOT NULL DEFAULT false
);

-- A serve leases one held item to one reviewer until its verdict or expiry
-- (D14); the verdict and the lineage closure checked are kept with it.
CREATE TABLE admission.serves (
    tenant_id          text        NOT NULL,
    id                 text        NOT NULL,
    artifact_id        text        NOT NULL,
    reviewer_key_id    text        NOT NULL,
    reviewer_principal text        NOT NULL,
    self_signed        boolean     NOT NULL DEFAULT false,
    served_at          timestamptz NOT NULL,
    expires_at         timestamptz NOT NULL,
    consumed_at        timestamptz,
    verdict            text        CHECK (verdict IN ('approve', 'reject')),
    reason             text,
    closure            jsonb       NOT NULL DEFAULT '[]',
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, artifact_id) REFERENCES admission.artifacts (tenant_id, id)
);
CREATE INDEX serves_by_artifact ON admission.serves (tenant_id, artifact_id);
