-- name: StagedUpsert :exec
INSERT INTO retrieval.staged (tenant_id, artifact_id, embedding, embedding_model)
VALUES (@tenant_id, @artifact_id, sqlc.arg(embedding)::halfvec, @embedding_model)
ON CONFLICT (tenant_id, artifact_id) DO UPDATE SET embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model;

-- name: StagedDelete :exec
DELETE FROM retrieval.staged WHERE tenant_id = $1 AND artifact_id = $2;

-- name: EntryInsert :exec
-- Takes the claim's staged embedding out (zero rows or one) and inserts
-- the entry with it, or with the embedding given, in one statement. The
-- full-text vector uses the tenant's configured language and weighs the
-- entry's lead (retrieval.entry_tsv, migration 0013); EntryCounted then
-- adds its length (distinct lexemes) to the corpus statistics. The DELETE
-- runs whether or not an embedding is given, as a data-modifying WITH
-- always does.
WITH staged AS (
    DELETE FROM retrieval.staged s WHERE s.tenant_id = @tenant_id AND s.artifact_id = @artifact_id
    RETURNING s.embedding, s.embedding_model
)
INSERT INTO retrieval.entries (
    tenant_id, artifact_id, workarea_id, workarea_id_path, kind, claim_key, version, text, tsv,
    embedding, embedding_model, promoted_at, simulation_id, attachments
) VALUES (
    @tenant_id, @artifact_id, @workarea_id, CAST(sqlc.arg(workarea_id_path)::text AS ltree), @kind, @claim_key, @version, @text,
    retrieval.entry_tsv(coalesce((SELECT t.fts_language FROM retrieval.tenant_settings t WHERE t.tenant_id = @tenant_id), 'english'::regconfig), @text),
    CASE WHEN sqlc.narg(embedding)::halfvec IS NULL THEN (SELECT st.embedding FROM staged st) ELSE sqlc.narg(embedding)::halfvec END,
    CASE WHEN sqlc.narg(embedding)::halfvec IS NULL THEN (SELECT st.embedding_model FROM staged st) ELSE sqlc.narg(embedding_model)::text END,
    @promoted_at, @simulation_id, @attachments
);

-- name: EntryDelete :one
DELETE FROM retrieval.entries WHERE tenant_id = $1 AND artifact_id = $2
RETURNING workarea_id, workarea_id_path::text AS workarea_id_path, length(tsv)::bigint AS lexemes;

-- name: TermDFAdd :exec
-- Counts an entry's lexemes; sorted, so concurrent promotions lock the
-- shared rows in one order.
INSERT INTO retrieval.term_df (tenant_id, term, df)
SELECT e.tenant_id, t.term, 1
FROM retrieval.entries e, unnest(tsvector_to_array(e.tsv)) AS t(term)
WHERE e.tenant_id = $1 AND e.artifact_id = $2
ORDER BY t.term
ON CONFLICT (tenant_id, term) DO UPDATE SET df = retrieval.term_df.df + 1;

-- name: EntryCounted :exec
-- A promoted entry's statistics in one statement, in the order every unit
-- of work that changes the serving tier takes these rows: the tenant's
-- corpus row (one more entry, its length), then its lexemes' rows
-- (sorted), then its workarea's count. Each step reads the one before it,
-- so it runs only once that one has taken its rows: the corpus row is
-- locked before any lexeme row, as CorpusLock does elsewhere.
WITH corpus AS (
    INSERT INTO retrieval.corpus AS c (tenant_id, docs, lexemes)
    SELECT e.tenant_id, 1, length(e.tsv) FROM retrieval.entries e
    WHERE e.tenant_id = @tenant_id AND e.artifact_id = @artifact_id
    ON CONFLICT (tenant_id) DO UPDATE SET docs = c.docs + 1, lexemes = c.lexemes + EXCLUDED.lexemes
    RETURNING c.tenant_id
), terms AS (
    INSERT INTO retrieval.term_df AS d (tenant_id, term, df)
    SELECT e.tenant_id, t.term, 1
    FROM corpus, retrieval.entries e, unnest(tsvector_to_array(e.tsv)) AS t(term)
    WHERE e.tenant_id = corpus.tenant_id AND e.artifact_id = @artifact_id
    ORDER BY t.term
    ON CONFLICT (tenant_id, term) DO UPDATE SET df = d.df + 1
    RETURNING 1
)
INSERT INTO retrieval.workarea_counts AS w (tenant_id, workarea_id, id_path, n)
SELECT @tenant_id, @workarea_id, CAST(sqlc.arg(id_path)::text AS ltree), 1
FROM (SELECT count(*) FROM terms) AS counted
ON CONFLICT (tenant_id, workarea_id) DO UPDATE SET n = w.n + 1;

-- name: TermDFRemove :exec
UPDATE retrieval.term_df d SET df = greatest(d.df - 1, 0)
FROM (
    SELECT t.term FROM retrieval.entries e, unnest(tsvector_to_array(e.tsv)) AS t(term)
    WHERE e.tenant_id = $1 AND e.artifact_id = $2
    ORDER BY t.term
) x
WHERE d.tenant_id = $1 AND d.term = x.term;

-- name: CorpusAdd :exec
INSERT INTO retrieval.corpus (tenant_id, docs, lexemes)
VALUES (@tenant_id, greatest(sqlc.arg(delta)::bigint, 0), greatest(sqlc.arg(lexemes_delta)::bigint, 0))
ON CONFLICT (tenant_id) DO UPDATE SET
    docs = greatest(retrieval.corpus.docs + sqlc.arg(delta)::bigint, 0),
    lexemes = greatest(retrieval.corpus.lexemes + sqlc.arg(lexemes_delta)::bigint, 0);

-- name: CorpusLock :exec
-- Takes the tenant's corpus row (creating it if need be): every unit of
-- work that changes the serving tier locks it before any lexeme row, so
-- one that indexes one version and withdraws another cannot deadlock with
-- another promotion.
INSERT INTO retrieval.corpus (tenant_id, docs, lexemes) VALUES (@tenant_id, 0, 0)
ON CONFLICT (tenant_id) DO UPDATE SET docs = retrieval.corpus.docs;

-- name: EntryExists :one
SELECT EXISTS (SELECT 1 FROM retrieval.entries WHERE tenant_id = $1 AND artifact_id = $2);

-- name: CountsAdd :exec
INSERT INTO retrieval.workarea_counts (tenant_id, workarea_id, id_path, n)
VALUES (@tenant_id, @workarea_id, CAST(sqlc.arg(id_path)::text AS ltree), greatest(sqlc.arg(delta)::int, 0))
ON CONFLICT (tenant_id, workarea_id) DO UPDATE SET n = greatest(retrieval.workarea_counts.n + sqlc.arg(delta)::int, 0);

-- name: QueryTerms :many
-- The query's lexemes in the tenant's language with their document
-- frequencies, the corpus size and total length, and roughly how many
-- entries every tenant has (what the shared vector index holds). That
-- last one is the table's row count as autovacuum last saw it: summing the
-- per-tenant rows instead scans a table that every promotion updates.
-- An overfetch planned from a stale count falls back to a filtered search.
SELECT t.term::text AS term, coalesce(d.df, 0)::bigint AS df,
       coalesce((SELECT c.docs FROM retrieval.corpus c WHERE c.tenant_id = @tenant_id), 0)::bigint AS docs,
       coalesce((SELECT c.lexemes FROM retrieval.corpus c WHERE c.tenant_id = @tenant_id), 0)::bigint AS lexemes,
       (SELECT greatest(pc.reltuples, 0) FROM pg_catalog.pg_class pc WHERE pc.oid = 'retrieval.entries'::regclass)::bigint AS all_docs
FROM unnest(tsvector_to_array(to_tsvector(
         coalesce((SELECT s.fts_language FROM retrieval.tenant_settings s WHERE s.tenant_id = @tenant_id), 'english'::regconfig),
         sqlc.arg(query)::text))) AS t(term)
LEFT JOIN retrieval.term_df d ON d.tenant_id = @tenant_id AND d.term = t.term;

-- name: SubtreeCount :one
-- Rows a recall's filter can reach, from maintained per-workarea counts.
-- Casts as subqueries, computed once (sqlc.yaml): over a tenant's thousand
-- workareas the per-row casts of a generic plan were half the statement.
SELECT coalesce(sum(n), 0)::bigint FROM retrieval.workarea_counts
WHERE tenant_id = @tenant_id AND id_path <@ (SELECT CAST(sqlc.arg(scope)::text AS ltree))
  AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> id_path
  AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> id_path);

-- name: HitsAndSteering :many
-- A recall's hits by id (steering false; one withdrawn meanwhile is not
-- there) and, in the same statement, one round trip, the steering rows of
-- the scope, its ancestors and its subtree that the caller may read
-- (steering true): never ranked, numbered by path depth then time.
SELECT false AS steering, 0::bigint AS ord, h.artifact_id, h.workarea_id, h.kind, h.claim_key, h.version, h.text, h.promoted_at, h.attachments, h.simulation_id
FROM retrieval.entries h WHERE h.tenant_id = @tenant_id AND h.artifact_id = ANY(@ids::text[])
UNION ALL
(SELECT true AS steering, row_number() OVER (ORDER BY nlevel(s.workarea_id_path), s.promoted_at) AS ord,
    s.artifact_id, s.workarea_id, s.kind, s.claim_key, s.version, s.text, s.promoted_at, s.attachments, s.simulation_id
FROM retrieval.entries s
WHERE s.tenant_id = @tenant_id AND s.kind = 'steering'
  AND (s.simulation_id IS NULL OR s.simulation_id = ANY(@fence::text[]))
  AND (s.workarea_id_path @> (SELECT CAST(sqlc.arg(scope)::text AS ltree)) OR s.workarea_id_path <@ (SELECT CAST(sqlc.arg(scope)::text AS ltree)))
  AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> s.workarea_id_path
  AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> s.workarea_id_path)
ORDER BY nlevel(s.workarea_id_path), s.promoted_at
LIMIT @max_rows);

-- name: EntryEmbeddings :many
-- Stored embeddings of entries under one model, for query feedback.
SELECT CAST(embedding::vector AS real[]) AS embedding
FROM retrieval.entries
WHERE tenant_id = @tenant_id AND artifact_id = ANY(@ids::text[])
  AND embedding_model = @model AND embedding IS NOT NULL;

-- name: ReadLogInsert :batchexec
-- Read-log rows, many in one round trip and one commit (readlog.go).
INSERT INTO retrieval.read_log (tenant_id, key_id, workarea_id, query_sha256, returned, at, operation, simulations)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8);

-- name: ReadLogList :many
-- One tenant's read log by key and/or workarea ('' for any), newest
-- first, below the row before_id (0: from the newest).
SELECT id, key_id, workarea_id, operation, query_sha256, returned, at, simulations
FROM retrieval.read_log
WHERE tenant_id = @tenant_id
  AND (@key_id::text = '' OR key_id = @key_id::text)
  AND (@workarea_id::text = '' OR workarea_id = @workarea_id::text)
  AND (@before_id::bigint = 0 OR id < @before_id::bigint)
ORDER BY id DESC
LIMIT @max_rows;

-- name: ReadLogPurge :execrows
-- Read-log rows older than the cutoff, a batch at a time.
DELETE FROM retrieval.read_log
WHERE (tenant_id, id) IN (SELECT r.tenant_id, r.id FROM retrieval.read_log r WHERE r.at < @cutoff LIMIT @max_rows);

-- name: CorpusTenants :many
-- Tenants with a serving tier, for reindexing them all.
SELECT tenant_id FROM retrieval.corpus ORDER BY tenant_id;

-- name: TenantLanguageSet :exec
-- Sets the tenant's full-text language; an unknown text search
-- configuration fails the cast.
INSERT INTO retrieval.tenant_settings (tenant_id, fts_language)
VALUES (@tenant_id, CAST(sqlc.arg(language)::text AS regconfig))
ON CONFLICT (tenant_id) DO UPDATE SET fts_language = EXCLUDED.fts_language;

-- name: TenantLanguage :one
SELECT coalesce((SELECT s.fts_language::text FROM retrieval.tenant_settings s WHERE s.tenant_id = @tenant_id), 'english')::text;

-- name: EntriesAfter :many
-- One page of a tenant's entries in id order, for reindexing.
SELECT artifact_id, text, coalesce(embedding_model, '')::text AS embedding_model,
       tsv = retrieval.entry_tsv(coalesce((SELECT s.fts_language FROM retrieval.tenant_settings s WHERE s.tenant_id = @tenant_id), 'english'::regconfig), text) AS tsv_current
FROM retrieval.entries
WHERE tenant_id = @tenant_id AND artifact_id > @after
ORDER BY artifact_id
LIMIT @max_rows;

-- name: EntrySetEmbedding :exec
UPDATE retrieval.entries SET embedding = @embedding, embedding_model = @embedding_model
WHERE tenant_id = @tenant_id AND artifact_id = @artifact_id;

-- name: EntryRebuildTSV :one
-- Re-parses an entry in the tenant's language (retrieval.entry_tsv);
-- returns how its length
-- changed. The old tsvector's frequencies are removed before (TermDFRemove)
-- and the new one's added after (TermDFAdd).
WITH old AS (
    SELECT length(tsv)::bigint AS lexemes FROM retrieval.entries
    WHERE tenant_id = @tenant_id AND artifact_id = @artifact_id
)
UPDATE retrieval.entries e
SET tsv = retrieval.entry_tsv(coalesce((SELECT s.fts_language FROM retrieval.tenant_settings s WHERE s.tenant_id = @tenant_id), 'english'::regconfig), e.text)
WHERE e.tenant_id = @tenant_id AND e.artifact_id = @artifact_id
RETURNING (length(e.tsv) - (SELECT lexemes FROM old))::bigint AS lexemes_delta;
