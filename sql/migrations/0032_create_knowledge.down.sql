DROP SCHEMA knowledge CASCADE;
DROP INDEX admission.artifacts_pages;
DELETE FROM admission.artifacts WHERE kind = 'page';
ALTER TABLE admission.artifacts DROP CONSTRAINT artifacts_page_fields;
ALTER TABLE admission.artifacts DROP COLUMN base_version;
ALTER TABLE admission.artifacts DROP COLUMN page_version;
ALTER TABLE admission.artifacts DROP CONSTRAINT artifacts_kind_check;
ALTER TABLE admission.artifacts ADD CONSTRAINT artifacts_kind_check CHECK (kind IN ('memory', 'derived_fact', 'steering'));
