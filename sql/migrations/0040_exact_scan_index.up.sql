-- contexts/retrieval: an exact vector scan reads its scope's rows only,
-- from one index. The vector leg scans exactly when a scope holds few rows
-- (domain.Plan); it found them through the path index and then read each
-- row's heap page, one page a row, as a workarea's entries are spread over
-- the table by promotion time, or, when the planner guessed a wide scope,
-- it read the whole table (the soak's creeping cost; at 1M entries a 1 %
-- scope took 39–63 ms). This index holds, per workarea, everything the
-- exact scan reads, embeddings included, so the scan is index-only over a
-- contiguous run of leaf pages (docs/BENCHMARKS.md). About 1 KB an entry;
-- other models get theirs from EnsureVectorIndex when their vectors fit a
-- B-tree tuple. Steering is never ranked, so it is left out.
CREATE INDEX entries_scope_builtin_384 ON retrieval.entries (tenant_id, workarea_id)
    INCLUDE (artifact_id, simulation_id, workarea_id_path, embedding)
    WHERE embedding_model = 'oml-builtin-v2-384' AND kind <> 'steering';
