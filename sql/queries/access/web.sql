-- name: WebCredentialInsert :exec
INSERT INTO access.web_credentials (tenant_id, id, key_id, kind, selector, verifier, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8);

-- name: WebCredentialBySelector :one
SELECT c.tenant_id, c.id, c.key_id, c.kind, c.verifier, c.expires_at, c.ended_at,
       k.role, k.revoked_at, p.id AS principal_id, p.name AS principal
FROM access.web_credentials c
JOIN access.keys k ON k.tenant_id = c.tenant_id AND k.id = c.key_id
JOIN access.principals p ON p.tenant_id = k.tenant_id AND p.id = k.principal_id
WHERE c.selector = $1;

-- name: WebCredentialEnd :execrows
UPDATE access.web_credentials SET ended_at = $3
WHERE tenant_id = $1 AND id = $2 AND ended_at IS NULL AND expires_at > $3;

-- name: WebCredentialsEndForKey :execrows
UPDATE access.web_credentials SET ended_at = $3
WHERE tenant_id = $1 AND key_id = $2 AND ended_at IS NULL;

-- name: WebCredentialsPurge :execrows
-- Credentials that ended or expired before the cutoff, a batch at a time
-- (their journal events stay).
DELETE FROM access.web_credentials
WHERE (tenant_id, id) IN (
    SELECT c.tenant_id, c.id FROM access.web_credentials c
    WHERE c.expires_at < @cutoff OR c.ended_at < @cutoff
    LIMIT @max_rows
);
