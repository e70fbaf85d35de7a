DROP INDEX admission.artifacts_claim_promoted;
DROP INDEX admission.artifacts_one_successor;
