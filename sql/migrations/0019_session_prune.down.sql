DELETE FROM sessions.active a USING sessions.sessions s
WHERE a.tenant_id = s.tenant_id AND a.session_id = s.id AND s.status = 'pruned';
DELETE FROM sessions.sessions WHERE status = 'pruned';
ALTER TABLE sessions.sessions DROP CONSTRAINT sessions_status_check;
ALTER TABLE sessions.sessions ADD CONSTRAINT sessions_status_check CHECK (status IN ('running', 'ended'));
