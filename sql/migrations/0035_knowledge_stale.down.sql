DROP INDEX knowledge.versions_stale;
