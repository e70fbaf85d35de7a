DROP TABLE access.bans;
