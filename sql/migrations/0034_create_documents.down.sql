DROP SCHEMA documents CASCADE;
DROP INDEX admission.artifacts_documents;
DELETE FROM admission.artifacts WHERE kind = 'document';
ALTER TABLE admission.artifacts DROP CONSTRAINT artifacts_page_fields;
ALTER TABLE admission.artifacts ADD CONSTRAINT artifacts_page_fields
    CHECK ((kind = 'page') = (page_version IS NOT NULL) AND (kind = 'page' OR base_version IS NULL));
ALTER TABLE admission.artifacts DROP CONSTRAINT artifacts_kind_check;
ALTER TABLE admission.artifacts ADD CONSTRAINT artifacts_kind_check CHECK (kind IN ('memory', 'derived_fact', 'steering', 'page'));
