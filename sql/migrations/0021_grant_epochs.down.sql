DROP INDEX access.grants_workarea;
DROP INDEX access.grants_key;
ALTER TABLE access.grants DROP COLUMN removed_epoch, DROP COLUMN created_epoch;
