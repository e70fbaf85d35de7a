DROP INDEX inbox.items_resolved_by_asker;
DROP TABLE inbox.subscriptions;
DROP TABLE inbox.attention_cursors;
