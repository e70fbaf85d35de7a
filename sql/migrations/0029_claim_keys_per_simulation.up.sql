-- contexts/admission: a claim key names one claim per workarea and
-- simulation (D10). A simulation's rows must not take a key from everyone
-- else (a conflict would reveal that they exist), and outside rows must
-- not take one from the simulation: the simulation's claims and the
-- others' live side by side under the same key, each with its versions.
DROP INDEX admission.artifacts_claim_version;
CREATE UNIQUE INDEX artifacts_claim_version
    ON admission.artifacts (tenant_id, workarea_id, coalesce(simulation_id, ''), claim_key, version)
    WHERE state <> 'erased';
