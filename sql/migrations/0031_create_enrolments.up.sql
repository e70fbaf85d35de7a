-- contexts/access: self-service enrolment (issue 15, seed 002). An agent
-- without a key asks to join the tenant open to enrolment with a one-line
-- reason; it gets a pending token, stored like a key's (selector and the
-- SHA-256 of its secret) and refused by every ordinary route until an
-- admin approves the request from the inbox, when the same token becomes a
-- working key (the key row takes the selector and verifier).
CREATE TABLE access.enrolments (
    tenant_id   text        NOT NULL REFERENCES access.tenants (id),
    id          text        NOT NULL,
    selector    bytea       NOT NULL UNIQUE,
    verifier    bytea       NOT NULL,
    reason      text        NOT NULL CHECK (length(reason) BETWEEN 1 AND 199),
    -- The socket peer (or, behind a trusted proxy, the client it names).
    peer        text        NOT NULL,
    status      text        NOT NULL CHECK (status IN ('pending', 'approved', 'refused')),
    created_at  timestamptz NOT NULL,
    -- Fixed when asked (OML_ENROL_PENDING_TTL then): the inbox item's
    -- deadline too, so the two never disagree.
    expires_at  timestamptz NOT NULL,
    decided_at  timestamptz,
    decided_by  text,
    note        text        NOT NULL DEFAULT '',
    -- The key the approval issued (same token), and the inbox item.
    key_id      text,
    item_id     text        NOT NULL DEFAULT '',
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX enrolments_pending ON access.enrolments (tenant_id, created_at) WHERE status = 'pending';

-- contexts/inbox: an enrolment request is an inbox item of its own kind.
ALTER TABLE inbox.items DROP CONSTRAINT items_kind_check;
ALTER TABLE inbox.items ADD CONSTRAINT items_kind_check CHECK (kind IN ('question', 'approval', 'enrol_request'));
