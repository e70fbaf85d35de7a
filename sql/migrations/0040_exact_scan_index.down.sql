DROP INDEX retrieval.entries_scope_builtin_384;
