DROP TABLE attachments.tenant_limits;
