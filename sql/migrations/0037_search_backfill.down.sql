-- The backfilled rows stay: they are what search would index anyway.
SELECT 1;
