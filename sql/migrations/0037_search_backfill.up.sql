-- Search covers what was written before it existed: coordination records
-- with a body (signals, questions, approvals, answers) from the journal,
-- and session brain entries (migration 0033 indexes new ones as they are
-- written). The first 256 KiB of each, parsed in the tenant's language.
INSERT INTO retrieval.search_rows (tenant_id, corpus, row_id, workarea_id, workarea_id_path, title, body, tsv, actor, at)
SELECT e.tenant_id, 'event', e.event_id, e.workarea_id, w.id_path, substr(e.event_type, 6), t.body,
       retrieval.entry_tsv(coalesce(s.fts_language, 'english'::regconfig), t.body), coalesce(e.payload->>'principal', ''), e.at
FROM platform.journal_events e
JOIN access.workareas w ON w.tenant_id = e.tenant_id AND w.id = e.workarea_id
LEFT JOIN retrieval.tenant_settings s ON s.tenant_id = e.tenant_id
CROSS JOIN LATERAL (SELECT left(e.payload->>'body', 262144) AS body) t
WHERE e.event_type LIKE 'feed.%' AND coalesce(e.payload->>'body', '') <> ''
ON CONFLICT DO NOTHING;

INSERT INTO retrieval.search_rows (tenant_id, corpus, row_id, workarea_id, workarea_id_path, session_id, title, body, tsv, actor, at)
SELECT b.tenant_id, 'brain', b.session_id || ':' || b.path, se.workarea_id, se.workarea_id_path, b.session_id, b.path, t.body,
       retrieval.entry_tsv(coalesce(s.fts_language, 'english'::regconfig), t.body), b.updated_by, b.updated_at
FROM sessions.brain_entries b
JOIN sessions.sessions se ON se.tenant_id = b.tenant_id AND se.id = b.session_id
LEFT JOIN retrieval.tenant_settings s ON s.tenant_id = b.tenant_id
CROSS JOIN LATERAL (SELECT left(convert_from(b.content, 'UTF8'), 262144) AS body) t
ON CONFLICT DO NOTHING;
