DROP TABLE access.quotas;
