DROP TABLE retrieval.search_rows;
