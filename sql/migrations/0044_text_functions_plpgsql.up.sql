-- contexts/retrieval: the two functions every promotion calls, in PL/pgSQL.
-- As LANGUAGE sql functions with a subquery, Postgres 15 could not inline
-- them where a promotion calls them (the INSERT's tsv, the full-text
-- index's expression), so each statement that called one parsed, analysed
-- and planned its body anew: about 20 µs a call in pgbench, three calls a
-- promotion (the entry's tsv, its search row's, the index's prefixes).
-- A PL/pgSQL function is compiled once per session and keeps its
-- expressions' plans. The results are the same for every input
-- (TestTextFunctionsKeepTheirResults), so nothing is re-indexed.
--
-- scope_prefixes names ltree's functions by schema: a PL/pgSQL body looks its
-- names up when it runs, under the caller's search_path, and pg_restore
-- rebuilds indexes with an empty one.
CREATE OR REPLACE FUNCTION retrieval.entry_tsv(cfg regconfig, body text) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    p integer := regexp_instr(body, '[.!?]([ \t\n\v\f\r]|$)');
BEGIN
    IF p BETWEEN 1 AND 300 AND substr(body, p + 1) ~ '[^ \t\n\v\f\r]' THEN
        RETURN setweight(to_tsvector(cfg, left(body, p)), 'B') || to_tsvector(cfg, substr(body, p + 1));
    END IF;
    RETURN to_tsvector(cfg, body);
END
$$;

-- ltree's schema is wherever the database has the extension.
DO $migration$
BEGIN
    EXECUTE format($f$
CREATE OR REPLACE FUNCTION retrieval.scope_prefixes(p ltree) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    prefixes text[] := '{}';
BEGIN
    FOR i IN 1..%1$I.nlevel(p) LOOP
        prefixes := prefixes || %1$I.subpath(p, 0, i)::text;
    END LOOP;
    RETURN prefixes;
END
$$
$f$, (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'ltree'));
END
$migration$;
