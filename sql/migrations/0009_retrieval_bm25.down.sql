ALTER TABLE retrieval.corpus DROP COLUMN lexemes;
