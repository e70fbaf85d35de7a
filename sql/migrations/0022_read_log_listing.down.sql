DROP INDEX platform.idempotency_records_created;
DROP INDEX retrieval.read_log_at_only;
DROP INDEX retrieval.read_log_workarea;
DROP INDEX retrieval.read_log_key;
