-- contexts/retrieval: keep what ranking reads inside the heap row. An
-- entry is about 2 KB (text, tsvector, a 384-dimension halfvec), just over
-- the size at which Postgres starts compressing columns and moving them to
-- the TOAST table; the embedding, the largest and incompressible, went
-- first, so every exact scan and every full-text recheck paid an
-- out-of-line fetch. Now the embedding is never moved (PLAIN), the
-- tsvector is compressed in place before it is moved (MAIN), and only
-- rows over 4 KB are toasted at all: a long text goes out of line first.
-- Existing rows keep their layout until they are rewritten (VACUUM FULL
-- retrieval.entries, or oml-server reindex).
ALTER TABLE retrieval.entries
    ALTER COLUMN embedding SET STORAGE PLAIN,
    ALTER COLUMN tsv SET STORAGE MAIN;
ALTER TABLE retrieval.entries SET (toast_tuple_target = 4080);

-- The built-in embedder's vectors (hashed words, bigrams and trigrams) are
-- hard for a graph built with ef_construction 64: on 100k entries it gave
-- recall@10 0.86 at ef_search 200. Built with 200 it gives 0.96 at the
-- same search cost (docs/BENCHMARKS.md); the build takes three times
-- longer. One maintenance worker: pgvector 0.8.0's parallel build bug.
DROP INDEX retrieval.entries_hnsw_builtin_384;
SET LOCAL max_parallel_maintenance_workers = 0;
CREATE INDEX entries_hnsw_builtin_384 ON retrieval.entries
    USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 200)
    WHERE embedding_model = 'oml-builtin-v1-384';
