-- contexts/retrieval: the full-text leg ranks by BM25, which normalises a
-- document's term frequencies by its length against the corpus average.
-- A document's length is the number of distinct lexemes in its tsvector;
-- the corpus keeps their sum beside its size.
ALTER TABLE retrieval.corpus ADD COLUMN lexemes bigint NOT NULL DEFAULT 0 CHECK (lexemes >= 0);

UPDATE retrieval.corpus c
SET lexemes = (SELECT coalesce(sum(length(e.tsv)), 0) FROM retrieval.entries e WHERE e.tenant_id = c.tenant_id);
