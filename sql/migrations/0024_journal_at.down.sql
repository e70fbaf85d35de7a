DROP INDEX platform.journal_events_at;
