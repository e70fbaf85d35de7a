-- contexts/retrieval: the full-text index knows each entry's subtrees, so a
-- full-text leg over part of a tenant's tree reads only that part's
-- postings. The GIN index on tsv alone handed over every entry holding a
-- candidate lexeme; the leg then fetched each row's heap page to drop the
-- ones outside the scope: at 1M entries nine in ten of a 10 % scope's,
-- and a 1 % scope's leg took 5–9 ms intersecting the path index instead.
-- Here each entry is also indexed under its path's every prefix (the
-- subtrees that contain it), and a leg over a small part of the tenant
-- (domain.FullTextQuery.ScopeInIndex) adds the test
-- scope_prefixes(workarea_id_path) @> ARRAY[scope]: GIN intersects the
-- scope's postings with the lexemes' before any heap page is read
-- (docs/BENCHMARKS.md). The index answers tsv-only queries as the old one
-- did, so it replaces entries_tsv: one full-text index per promotion.
--
-- A workarea's id path never changes, so neither do an entry's prefixes.
CREATE FUNCTION retrieval.scope_prefixes(p ltree) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN array(SELECT subpath(p, 0, i)::text FROM generate_series(1, nlevel(p)) AS i);

-- A plain CREATE INDEX: writes to retrieval.entries wait while it builds
-- (32 seconds per million entries on the 2-vCPU test machine;
-- docs/OPERATIONS.md, "Upgrading past migration 0043").
CREATE INDEX entries_tsv_scope ON retrieval.entries
    USING gin (tsv, (retrieval.scope_prefixes(workarea_id_path))) WITH (fastupdate = off);
DROP INDEX retrieval.entries_tsv;
