DROP TABLE sessions.brain_entries;
