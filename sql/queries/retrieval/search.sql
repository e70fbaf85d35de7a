-- name: SearchRowUpsert :exec
-- A searchable row, parsed in the tenant's language like an entry.
INSERT INTO retrieval.search_rows (tenant_id, corpus, row_id, workarea_id, workarea_id_path, session_id, title, body, tsv, actor, at)
VALUES (
    @tenant_id, @corpus, @row_id, @workarea_id, CAST(sqlc.arg(workarea_id_path)::text AS ltree), sqlc.narg(session_id), @title, @body,
    retrieval.entry_tsv(coalesce((SELECT s.fts_language FROM retrieval.tenant_settings s WHERE s.tenant_id = @tenant_id), 'english'::regconfig), @body),
    @actor, @at
)
ON CONFLICT (tenant_id, corpus, row_id) DO UPDATE
SET title = EXCLUDED.title, body = EXCLUDED.body, tsv = EXCLUDED.tsv, actor = EXCLUDED.actor, at = EXCLUDED.at;

-- name: SearchRowDelete :exec
DELETE FROM retrieval.search_rows WHERE tenant_id = @tenant_id AND corpus = @corpus AND row_id = @row_id;

-- name: SearchRowsDropSession :exec
DELETE FROM retrieval.search_rows WHERE tenant_id = @tenant_id AND session_id = @session_id;

-- name: SearchRowsCopySession :exec
-- A fork's brain: the source's rows under the fork's session.
INSERT INTO retrieval.search_rows (tenant_id, corpus, row_id, workarea_id, workarea_id_path, session_id, title, body, tsv, actor, at)
SELECT s.tenant_id, s.corpus, @to_session::text || ':' || s.title, s.workarea_id, s.workarea_id_path, @to_session::text, s.title, s.body, s.tsv, s.actor, s.at
FROM retrieval.search_rows s
WHERE s.tenant_id = @tenant_id::text AND s.session_id = @from_session::text;

-- name: Search :many
-- Ranked full-text hits over feed events, the caller's own session
-- brains, promoted knowledge-base pages and promoted documents, inside the
-- readable subtrees (allow minus deny) under scope; brains only of the
-- sessions given. Each leg starts from its GIN index: the subtree test is
-- wrapped in IS TRUE so that no plan (a cached generic one included) walks
-- the scope by its path index instead and re-checks every row's tsvector.
-- At most 5,000 matches of each leg inside the scope are ranked: a query
-- whose words are in more rows ranks a subset of them.
WITH q AS MATERIALIZED (
    SELECT websearch_to_tsquery(coalesce((SELECT s.fts_language FROM retrieval.tenant_settings s WHERE s.tenant_id = @tenant_id), 'english'::regconfig), @query::text) AS tsq
), rows AS MATERIALIZED (
    SELECT r.corpus, r.row_id, r.workarea_id, r.session_id, r.title, r.actor, r.at, ts_rank_cd(r.tsv, q.tsq)::float8 AS rank
    FROM retrieval.search_rows r, q
    WHERE r.tenant_id = @tenant_id AND r.tsv @@ q.tsq
      AND (((SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> r.workarea_id_path
            AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> r.workarea_id_path)
            AND r.workarea_id_path <@ (SELECT CAST(sqlc.arg(scope)::text AS ltree))) IS TRUE)
      AND ((r.corpus = 'event' AND @events::bool) OR (r.corpus = 'brain' AND r.session_id = ANY(@sessions::text[])))
    LIMIT 5000
), pages AS MATERIALIZED (
    SELECT e.kind, e.artifact_id, e.workarea_id, e.claim_key, e.promoted_at, ts_rank_cd(e.tsv, q.tsq)::float8 AS rank
    FROM retrieval.entries e, q
    WHERE e.tenant_id = @tenant_id AND @pages::bool AND e.kind IN ('page', 'document') AND e.tsv @@ q.tsq
      AND (((SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> e.workarea_id_path
            AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> e.workarea_id_path)
            AND e.workarea_id_path <@ (SELECT CAST(sqlc.arg(scope)::text AS ltree))) IS TRUE)
    LIMIT 5000
)
SELECT h.corpus, h.row_id, h.workarea_id, h.session_id, h.title, h.actor, h.at, h.rank
FROM (
    SELECT r.corpus, r.row_id, r.workarea_id, r.session_id, r.title, r.actor, r.at, r.rank FROM rows r
    UNION ALL
    SELECT p.kind, p.artifact_id, p.workarea_id, NULL, p.claim_key, '', p.promoted_at, p.rank FROM pages p
) h
ORDER BY h.rank DESC, h.row_id
LIMIT @max_rows;

-- name: SearchSnippets :many
-- Highlighted fragments of the hits' texts (the first 16 KiB of each).
WITH q AS (
    SELECT coalesce((SELECT s.fts_language FROM retrieval.tenant_settings s WHERE s.tenant_id = @tenant_id), 'english'::regconfig) AS cfg
), t AS (
    SELECT q.cfg, websearch_to_tsquery(q.cfg, @query::text) AS tsq FROM q
)
SELECT r.row_id, ts_headline(t.cfg, left(r.body, 16384), t.tsq, 'MaxFragments=2, MaxWords=24, MinWords=8, StartSel=**, StopSel=**')::text AS snippet
FROM retrieval.search_rows r, t
WHERE r.tenant_id = @tenant_id AND r.corpus IN ('event', 'brain') AND r.row_id = ANY(@rows::text[])
UNION ALL
SELECT e.artifact_id, ts_headline(t.cfg, left(e.text, 16384), t.tsq, 'MaxFragments=2, MaxWords=24, MinWords=8, StartSel=**, StopSel=**')::text
FROM retrieval.entries e, t
WHERE e.tenant_id = @tenant_id AND e.artifact_id = ANY(@rows::text[]) AND e.kind IN ('page', 'document');

-- name: SearchRowsReparse :execrows
-- Re-parses up to 1,000 of a tenant's search rows whose tsvector is not
-- their text in the tenant's language (a reindex after a language change).
UPDATE retrieval.search_rows r
SET tsv = retrieval.entry_tsv(coalesce((SELECT s.fts_language FROM retrieval.tenant_settings s WHERE s.tenant_id = @tenant_id), 'english'::regconfig), r.body)
WHERE (r.tenant_id, r.corpus, r.row_id) IN (
    SELECT x.tenant_id, x.corpus, x.row_id FROM retrieval.search_rows x
    WHERE x.tenant_id = @tenant_id
      AND x.tsv IS DISTINCT FROM retrieval.entry_tsv(coalesce((SELECT s.fts_language FROM retrieval.tenant_settings s WHERE s.tenant_id = @tenant_id), 'english'::regconfig), x.body)
    LIMIT 1000
);
