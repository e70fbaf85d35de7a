-- contexts/retrieval: the read log keeps, beside each returned id, the
-- simulation of the row it names ('' for none), so a listing shows an
-- admin only the ids its own fence admits (D10). Rows logged before this
-- have none: their ids predate any simulation row.
ALTER TABLE retrieval.read_log ADD COLUMN simulations text[] NOT NULL DEFAULT '{}';
