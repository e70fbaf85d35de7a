-- contexts/audit: a simulation keeps its workarea's id path (which never
-- moves), so a write into it checks that its target lies in the
-- simulation's subtree without reading the access context's tree. A
-- simulation made before this has none: nothing lies in '' (fail closed).
ALTER TABLE audit.simulations ADD COLUMN workarea_id_path text NOT NULL DEFAULT '';
ALTER TABLE audit.simulations ALTER COLUMN workarea_id_path DROP DEFAULT;
