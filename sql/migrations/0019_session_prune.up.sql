-- A pruned session: the human ended its retention; the record and its
-- name stay (no session may take the name again).
ALTER TABLE sessions.sessions DROP CONSTRAINT sessions_status_check;
ALTER TABLE sessions.sessions ADD CONSTRAINT sessions_status_check CHECK (status IN ('running', 'ended', 'pruned'));
