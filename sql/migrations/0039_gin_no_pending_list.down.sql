-- Back to GIN's default pending list.
ALTER INDEX retrieval.entries_tsv RESET (fastupdate);
ALTER INDEX retrieval.search_rows_tsv RESET (fastupdate);
