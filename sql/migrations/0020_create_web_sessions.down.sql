DROP TABLE access.web_credentials;
