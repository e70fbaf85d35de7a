-- An admin lists the read log by key or by workarea, newest first (GET
-- /v1/read-log), and every replica sweeps read-log rows and idempotency
-- records past their retention (OML_READ_LOG_RETENTION,
-- OML_IDEMPOTENCY_RETENTION).
CREATE INDEX read_log_key ON retrieval.read_log (tenant_id, key_id, id);
CREATE INDEX read_log_workarea ON retrieval.read_log (tenant_id, workarea_id, id);
CREATE INDEX read_log_at_only ON retrieval.read_log (at);
CREATE INDEX idempotency_records_created ON platform.idempotency_records (created_at);
