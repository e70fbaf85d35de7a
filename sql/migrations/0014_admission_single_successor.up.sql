-- A version has at most one live successor: two supersessions of one
-- version would fork the claim, and recall would return both branches. A
-- held or promoted successor holds the place; a rejected, expired, demoted
-- or erased one frees the version to be superseded again. (A database that
-- already holds a fork refuses this index; docs/OPERATIONS.md says how to
-- settle one.)
CREATE UNIQUE INDEX artifacts_one_successor ON admission.artifacts (tenant_id, supersedes)
    WHERE supersedes IS NOT NULL AND state IN ('held', 'promoted');
-- The versions of one claim, for the promotion that keeps only the newest
-- in recall.
CREATE INDEX artifacts_claim_promoted ON admission.artifacts (tenant_id, workarea_id, claim_key, version)
    WHERE state = 'promoted';
