ALTER TABLE admission.artifacts DROP COLUMN judged_by;
