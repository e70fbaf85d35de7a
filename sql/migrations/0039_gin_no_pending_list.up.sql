-- Full-text indexes take each entry at once instead of through GIN's
-- pending list. With the list (fastupdate, the default) an insert now and
-- then merges megabytes of pending entries into the index while the
-- promotion that made it waits, and every full-text query scans the
-- whole list until then: latency rose and fell with it in the soak
-- (docs/BENCHMARKS.md, Reliability). The list there now is merged here.
ALTER INDEX retrieval.entries_tsv SET (fastupdate = off);
ALTER INDEX retrieval.search_rows_tsv SET (fastupdate = off);
SELECT gin_clean_pending_list('retrieval.entries_tsv'::regclass);
SELECT gin_clean_pending_list('retrieval.search_rows_tsv'::regclass);
