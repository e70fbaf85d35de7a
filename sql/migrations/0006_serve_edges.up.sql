-- The serve ceremony leases edges too: a serve names either an artifact or
-- an edge (lineage.edges, owned by the lineage context).
ALTER TABLE admission.serves
    ALTER COLUMN artifact_id DROP NOT NULL,
    ADD COLUMN edge_id text,
    ADD CONSTRAINT serves_one_subject CHECK ((artifact_id IS NULL) <> (edge_id IS NULL));
CREATE INDEX serves_by_edge ON admission.serves (tenant_id, edge_id) WHERE edge_id IS NOT NULL;
