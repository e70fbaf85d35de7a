-- name: StagedUpsert :exec
INSERT INTO retrieval.staged (tenant_id, artifact_id, embedding, embedding_model)
VALUES ($1, $2, $3, $4)
ON CONFLICT (tenant_id, artifact_id) DO UPDATE SET embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model;

-- name: StagedGet :one
SELECT embedding, embedding_model FROM retrieval.staged WHERE tenant_id = $1 AND artifact_id = $2;

-- name: StagedDelete :exec
DELETE FROM retrieval.staged WHERE tenant_id = $1 AND artifact_id = $2;

-- name: EntryInsert :one
-- The full-text vector uses the tenant's configured language; the entry's
-- length (distinct lexemes) goes to the corpus statistics.
INSERT INTO retrieval.entries (
    tenant_id, artifact_id, workarea_id, workarea_id_path, kind, claim_key, version, text, tsv,
    embedding, embedding_model, promoted_at, simulation_id, attachments
) VALUES (
    @tenant_id, @artifact_id, @workarea_id, CAST(sqlc.arg(workarea_id_path)::text AS ltree), @kind, @claim_key, @version, @text,
    to_tsvector(coalesce((SELECT s.fts_language FROM retrieval.tenant_settings s WHERE s.tenant_id = @tenant_id), 'english'::regconfig), @text),
    @embedding, @embedding_model, @promoted_at, @simulation_id, @attachments
)
RETURNING length(tsv)::bigint AS lexemes;

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

-- name: CountsAdd :exec
INSERT INTO retrieval.workarea_counts (tenant_id, workarea_id, id_path, n)
VALUES (@tenant_id, @workarea_id, CAST(sqlc.arg(id_path)::text AS ltree), greatest(sqlc.arg(delta)::int, 0))
ON CONFLICT (tenant_id, workarea_id) DO UPDATE SET n = greatest(retrieval.workarea_counts.n + sqlc.arg(delta)::int, 0);

-- name: QueryTerms :many
-- The query's lexemes in the tenant's language with their document
-- frequencies, and the corpus size and total length.
SELECT t.term::text AS term, coalesce(d.df, 0)::bigint AS df,
       coalesce((SELECT c.docs FROM retrieval.corpus c WHERE c.tenant_id = @tenant_id), 0)::bigint AS docs,
       coalesce((SELECT c.lexemes FROM retrieval.corpus c WHERE c.tenant_id = @tenant_id), 0)::bigint AS lexemes
FROM unnest(tsvector_to_array(to_tsvector(
         coalesce((SELECT s.fts_language FROM retrieval.tenant_settings s WHERE s.tenant_id = @tenant_id), 'english'::regconfig),
         sqlc.arg(query)::text))) AS t(term)
LEFT JOIN retrieval.term_df d ON d.tenant_id = @tenant_id AND d.term = t.term;

-- name: SubtreeCount :one
-- Rows a recall's filter can reach, from maintained per-workarea counts.
SELECT coalesce(sum(n), 0)::bigint FROM retrieval.workarea_counts
WHERE tenant_id = @tenant_id AND id_path <@ CAST(sqlc.arg(scope)::text AS ltree)
  AND CAST(sqlc.arg(allow)::text[] AS ltree[]) @> id_path
  AND NOT (CAST(sqlc.arg(deny)::text[] AS ltree[]) @> id_path);

-- name: SteeringFor :many
-- Steering of the scope, its ancestors and its subtree that the caller may
-- read: never ranked, by path depth then time.
SELECT artifact_id, workarea_id, kind, claim_key, version, text, promoted_at, attachments
FROM retrieval.entries
WHERE tenant_id = @tenant_id AND kind = 'steering' AND simulation_id IS NULL
  AND (workarea_id_path @> CAST(sqlc.arg(scope)::text AS ltree) OR workarea_id_path <@ CAST(sqlc.arg(scope)::text AS ltree))
  AND CAST(sqlc.arg(allow)::text[] AS ltree[]) @> workarea_id_path
  AND NOT (CAST(sqlc.arg(deny)::text[] AS ltree[]) @> workarea_id_path)
ORDER BY nlevel(workarea_id_path), promoted_at
LIMIT @max_rows;

-- name: FullTextLeg :many
-- The full-text leg: entries holding any of the query's (pruned) lexemes,
-- inside the subtree and the caller's read access, ranked by BM25
-- (k1 = 1.2, b = 0.75): Σ idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen))
-- over the query lexemes an entry holds, tf being the lexeme's number of
-- positions and len the entry's number of distinct lexemes.
SELECT e.artifact_id, s.score::real AS score
FROM retrieval.entries e, to_tsquery('simple', @tsquery) AS q,
LATERAL (
    SELECT sum((sqlc.arg(idf)::float8[])[w.i] * coalesce(cardinality(u.positions), 1) * 2.2
               / (coalesce(cardinality(u.positions), 1)
                  + 1.2 * (0.25 + 0.75 * length(e.tsv) / greatest(sqlc.arg(avg_len)::float8, 1))))::float8 AS score
    FROM unnest(e.tsv) AS u
    JOIN unnest(sqlc.arg(lexemes)::text[]) WITH ORDINALITY AS w(lexeme, i) ON w.lexeme = u.lexeme
) AS s
WHERE e.tenant_id = @tenant_id AND e.kind <> 'steering' AND e.simulation_id IS NULL
  AND e.tsv @@ q
  AND e.workarea_id_path <@ CAST(sqlc.arg(scope)::text AS ltree)
  AND CAST(sqlc.arg(allow)::text[] AS ltree[]) @> e.workarea_id_path
  AND NOT (CAST(sqlc.arg(deny)::text[] AS ltree[]) @> e.workarea_id_path)
ORDER BY s.score DESC, e.artifact_id
LIMIT @max_rows;

-- name: EntryEmbeddings :many
-- Stored embeddings of entries under one model, for query feedback.
SELECT CAST(embedding::vector AS real[]) AS embedding
FROM retrieval.entries
WHERE tenant_id = @tenant_id AND artifact_id = ANY(@ids::text[])
  AND embedding_model = @model AND embedding IS NOT NULL;

-- name: EntriesByIDs :many
SELECT artifact_id, workarea_id, kind, claim_key, version, text, promoted_at, attachments
FROM retrieval.entries WHERE tenant_id = $1 AND artifact_id = ANY(@ids::text[]);

-- name: ReadLogInsert :exec
INSERT INTO retrieval.read_log (tenant_id, key_id, workarea_id, query_sha256, returned, at)
VALUES ($1, $2, $3, $4, $5, $6);
