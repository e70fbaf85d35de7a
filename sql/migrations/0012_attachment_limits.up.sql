-- contexts/attachments: a tenant's own attachment size ceiling, set by its
-- admin, never above the deployment's (OML_MAX_UPLOAD_BYTES). No row: the
-- deployment's ceiling applies.
CREATE TABLE attachments.tenant_limits (
    tenant_id        text PRIMARY KEY,
    max_upload_bytes bigint NOT NULL CHECK (max_upload_bytes > 0),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
