-- contexts/retrieval: an entry's lead — its first sentence — counts four
-- times in ranking, as a title does. Memories state their gist first; on
-- Cranfield, where every abstract opens with its title, this lifted the
-- full-text leg's nDCG@10 from 0.355 to 0.366 (docs/BENCHMARKS.md).
--
-- The lead ends at the first '.', '!' or '?' followed by ASCII white space
-- (space, tab, line feed, vertical tab, form feed, carriage return) or the
-- end of the text, is at most 300 characters, and must leave some text after
-- it (a one-sentence entry has no lead: everything would weigh the same).
-- The white space is spelled out rather than [:space:], whose meaning
-- follows the database's locale. Its lexemes carry weight B, which
-- ts_rank_cd counts 0.4 against the 0.1 of the default weight D. The
-- built-in embedder finds the same lead (embed.LeadEnd; TestLeadAgrees) and
-- counts its features four times (model oml-builtin-v2).
CREATE FUNCTION retrieval.entry_tsv(cfg regconfig, body text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE
    WHEN p BETWEEN 1 AND 300 AND substr(body, p + 1) ~ '[^ \t\n\v\f\r]'
    THEN setweight(to_tsvector(cfg, left(body, p)), 'B') || to_tsvector(cfg, substr(body, p + 1))
    ELSE to_tsvector(cfg, body)
END
FROM (SELECT regexp_instr(body, '[.!?]([ \t\n\v\f\r]|$)') AS p) AS lead
$$;

-- The built-in embedder's version 2 (the lead counted four times) replaces
-- version 1; its index follows the model. Entries keep their version-1
-- vectors, which the vector leg no longer searches, until `oml-server
-- reindex` re-embeds them (and re-parses their tsvectors with the lead).
DROP INDEX retrieval.entries_hnsw_builtin_384;
SET LOCAL max_parallel_maintenance_workers = 0;
CREATE INDEX entries_hnsw_builtin_384 ON retrieval.entries
    USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 200)
    WHERE embedding_model = 'oml-builtin-v2-384';
