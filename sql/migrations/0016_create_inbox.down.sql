DROP INDEX IF EXISTS platform.journal_events_by_workarea;
DROP SCHEMA inbox CASCADE;
