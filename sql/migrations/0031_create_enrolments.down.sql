DELETE FROM inbox.items WHERE kind = 'enrol_request';
ALTER TABLE inbox.items DROP CONSTRAINT items_kind_check;
ALTER TABLE inbox.items ADD CONSTRAINT items_kind_check CHECK (kind IN ('question', 'approval'));
DROP TABLE access.enrolments;
