DROP INDEX documents.documents_id;
