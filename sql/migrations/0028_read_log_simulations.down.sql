ALTER TABLE retrieval.read_log DROP COLUMN simulations;
