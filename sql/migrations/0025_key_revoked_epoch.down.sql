ALTER TABLE access.keys DROP COLUMN revoked_epoch;
