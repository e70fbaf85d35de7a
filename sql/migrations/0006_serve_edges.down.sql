DELETE FROM admission.serves WHERE edge_id IS NOT NULL;
ALTER TABLE admission.serves
    DROP CONSTRAINT serves_one_subject,
    DROP COLUMN edge_id,
    ALTER COLUMN artifact_id SET NOT NULL;
