-- Back to the full-text index on tsv alone (with migration 0039's setting).
CREATE INDEX entries_tsv ON retrieval.entries USING gin (tsv) WITH (fastupdate = off);
DROP INDEX retrieval.entries_tsv_scope;
DROP FUNCTION retrieval.scope_prefixes(ltree);
