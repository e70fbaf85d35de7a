-- Back to the LANGUAGE sql bodies of migrations 0013 and 0043 (same results).
CREATE OR REPLACE FUNCTION retrieval.entry_tsv(cfg regconfig, body text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE
    WHEN p BETWEEN 1 AND 300 AND substr(body, p + 1) ~ '[^ \t\n\v\f\r]'
    THEN setweight(to_tsvector(cfg, left(body, p)), 'B') || to_tsvector(cfg, substr(body, p + 1))
    ELSE to_tsvector(cfg, body)
END
FROM (SELECT regexp_instr(body, '[.!?]([ \t\n\v\f\r]|$)') AS p) AS lead
$$;

CREATE OR REPLACE FUNCTION retrieval.scope_prefixes(p ltree) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN array(SELECT subpath(p, 0, i)::text FROM generate_series(1, nlevel(p)) AS i);
