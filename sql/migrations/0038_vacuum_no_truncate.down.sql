-- Autovacuum may truncate these tables again.
ALTER TABLE platform.journal_heads RESET (vacuum_truncate);
ALTER TABLE retrieval.corpus RESET (vacuum_truncate);
ALTER TABLE retrieval.workarea_counts RESET (vacuum_truncate);
ALTER TABLE retrieval.term_df RESET (vacuum_truncate);
ALTER TABLE retrieval.staged RESET (vacuum_truncate);
ALTER TABLE attachments.doomed RESET (vacuum_truncate);
ALTER TABLE inbox.workarea_events RESET (vacuum_truncate);
ALTER TABLE sessions.active RESET (vacuum_truncate);
