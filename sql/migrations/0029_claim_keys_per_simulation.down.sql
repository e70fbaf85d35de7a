DROP INDEX admission.artifacts_claim_version;
CREATE UNIQUE INDEX artifacts_claim_version ON admission.artifacts (tenant_id, workarea_id, claim_key, version)
    WHERE state <> 'erased';
