-- contexts/retrieval: an exact vector scan reads its scope's rows only,
-- from one index. The vector leg scans exactly when a scope holds few rows
-- (domain.Plan); it found them through the path index and then read each
-- row's heap page, one page a row, as a workarea's entries are spread over
-- the table by promotion time, or, when the planner guessed a wide scope,
-- it read the whole table (the soak's creeping cost; at 1M entries a 1 %
-- scope took 39–63 ms). This index holds, per workarea, what the exact
-- scan reads, embeddings included, so the scan is index-only over a
-- contiguous run of leaf pages (docs/BENCHMARKS.md). The scan takes the
-- scope's workareas from retrieval.workarea_counts, so no path is stored
-- here: an entry's size in it does not grow with the workarea's depth
-- (a B-tree entry is at most 2,704 bytes). About 1 KB an entry; other
-- models get theirs from EnsureVectorIndex when their vectors fit.
-- Steering is never ranked, so it is left out.
--
-- A plain CREATE INDEX: writes to retrieval.entries wait while it builds
-- (about 20 seconds per million entries on the 2-vCPU test machine;
-- docs/OPERATIONS.md, "Upgrading past migration 0040").
CREATE INDEX entries_scope_builtin_384 ON retrieval.entries (tenant_id, workarea_id)
    INCLUDE (artifact_id, simulation_id, embedding)
    WHERE embedding_model = 'oml-builtin-v2-384' AND kind <> 'steering';
