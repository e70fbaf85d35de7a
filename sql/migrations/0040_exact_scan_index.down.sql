-- The built-in model's scope index, and those EnsureVectorIndex built for
-- other models (they would keep costing every write).
DROP INDEX retrieval.entries_scope_builtin_384;
DO $$
DECLARE idx text;
BEGIN
    FOR idx IN SELECT indexrelid::regclass::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
               WHERE c.relnamespace = 'retrieval'::regnamespace AND c.relname LIKE 'entries\_scope\_%'
    LOOP
        EXECUTE 'DROP INDEX ' || idx;
    END LOOP;
END $$;
