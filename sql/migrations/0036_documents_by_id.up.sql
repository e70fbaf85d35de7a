-- The viewer reads a document by id alone (its URL names no tenant).
CREATE UNIQUE INDEX documents_id ON documents.documents (id);
