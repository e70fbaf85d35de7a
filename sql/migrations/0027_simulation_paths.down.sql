ALTER TABLE audit.simulations DROP COLUMN workarea_id_path;
