-- Hot rows and queues keep their pages. Autovacuum ends by truncating
-- empty pages at a table's end, under an ACCESS EXCLUSIVE lock; on these
-- small, constantly rewritten tables it found such pages often, and every
-- write waited behind it until it was cancelled (deadlock_timeout): the
-- one-row-per-tenant journal head stalled every journal append for a
-- second in the soak (docs/BENCHMARKS.md, Reliability). Their space is
-- reused instead of returned to the filesystem.
ALTER TABLE platform.journal_heads SET (vacuum_truncate = false);
ALTER TABLE retrieval.corpus SET (vacuum_truncate = false);
ALTER TABLE retrieval.workarea_counts SET (vacuum_truncate = false);
ALTER TABLE retrieval.term_df SET (vacuum_truncate = false);
ALTER TABLE retrieval.staged SET (vacuum_truncate = false);
ALTER TABLE attachments.doomed SET (vacuum_truncate = false);
ALTER TABLE inbox.workarea_events SET (vacuum_truncate = false);
ALTER TABLE sessions.active SET (vacuum_truncate = false);
