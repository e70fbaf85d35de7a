-- Web sign-in for the reviewer and inbox pages (web/). A credential is
-- either a session (the cookie of a signed-in browser) or a one-time
-- sign-in code (make run's link), each acting as one key. Like keys, the
-- token is selector ‖ secret: the selector finds the row, only a SHA-256 of
-- the secret is stored. A credential stops working when it expires, when it
-- ends (sign-out, a redeemed code) or when its key is revoked.
CREATE TABLE access.web_credentials (
    tenant_id  text        NOT NULL,
    id         text        NOT NULL,
    key_id     text        NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('session', 'code')),
    selector   bytea       NOT NULL UNIQUE,
    verifier   bytea       NOT NULL CHECK (length(verifier) = 32),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    ended_at   timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, key_id) REFERENCES access.keys (tenant_id, id)
);
CREATE INDEX web_credentials_key ON access.web_credentials (tenant_id, key_id) WHERE ended_at IS NULL;
