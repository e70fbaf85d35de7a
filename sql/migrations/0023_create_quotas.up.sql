-- Quotas and rate limits (D6, FR-8): a tenant's writes a minute (key_id
-- '') and a key's requests a minute. Each replica enforces limit/N
-- (OML_REPLICAS) with a token bucket of its own; a change is journalled
-- (quota.set).
CREATE TABLE access.quotas (
    tenant_id           text        NOT NULL REFERENCES access.tenants (id),
    key_id              text        NOT NULL DEFAULT '',
    writes_per_minute   integer     CHECK (writes_per_minute > 0),
    requests_per_minute integer     CHECK (requests_per_minute > 0),
    updated_at          timestamptz NOT NULL,
    updated_by          text        NOT NULL,
    PRIMARY KEY (tenant_id, key_id),
    CHECK ((key_id = '') = (requests_per_minute IS NULL)),
    CHECK ((key_id = '') = (writes_per_minute IS NOT NULL))
);
