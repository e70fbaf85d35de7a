DROP INDEX retrieval.entries_hnsw_builtin_384;
SET LOCAL max_parallel_maintenance_workers = 0;
CREATE INDEX entries_hnsw_builtin_384 ON retrieval.entries
    USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 200)
    WHERE embedding_model = 'oml-builtin-v1-384';
DROP FUNCTION retrieval.entry_tsv(regconfig, text);
