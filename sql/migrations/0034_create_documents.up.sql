-- contexts/documents (issue 15, seed 002's artifacts): published HTML or
-- markdown documents. A document's versions are admission claims of kind
-- 'document' (key /doc/<id>), versioned like knowledge-base pages: held
-- until a different identity ratifies them, then readable by the
-- workarea's readers and at the document's public or password URL.
ALTER TABLE admission.artifacts DROP CONSTRAINT artifacts_kind_check;
ALTER TABLE admission.artifacts ADD CONSTRAINT artifacts_kind_check
    CHECK (kind IN ('memory', 'derived_fact', 'steering', 'page', 'document'));
ALTER TABLE admission.artifacts DROP CONSTRAINT artifacts_page_fields;
ALTER TABLE admission.artifacts ADD CONSTRAINT artifacts_page_fields
    CHECK ((kind IN ('page', 'document')) = (page_version IS NOT NULL) AND (kind IN ('page', 'document') OR base_version IS NULL));
CREATE INDEX artifacts_documents ON admission.artifacts (tenant_id, workarea_id, claim_key, version DESC)
    WHERE kind = 'document';

CREATE SCHEMA documents;
CREATE TABLE documents.documents (
    tenant_id        text        NOT NULL,
    id               text        NOT NULL,
    workarea_id      text        NOT NULL,
    workarea_id_path ltree       NOT NULL,
    format           text        NOT NULL CHECK (format IN ('html', 'markdown')),
    -- workarea: its readers (signed in); public: anyone with the URL;
    -- password: anyone with the URL and the password.
    visibility       text        NOT NULL CHECK (visibility IN ('workarea', 'public', 'password')),
    -- PBKDF2-SHA256 of the password with a random salt (password only).
    password_salt    bytea,
    password_hash    bytea,
    CHECK ((visibility = 'password') = (password_hash IS NOT NULL)),
    -- The creator (seed 002's actor): never changed by others' updates.
    actor_principal  text        NOT NULL,
    actor_key_id     text        NOT NULL,
    session_id       text,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX documents_workarea ON documents.documents (tenant_id, workarea_id, id);

-- What each submitted version carries beside its text (in admission).
CREATE TABLE documents.versions (
    tenant_id    text        NOT NULL,
    document_id  text        NOT NULL,
    artifact_id  text        NOT NULL,
    title        text        NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    description  text        NOT NULL DEFAULT '' CHECK (length(description) <= 2000),
    label        text        NOT NULL DEFAULT '' CHECK (octet_length(label) <= 60),
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, artifact_id),
    FOREIGN KEY (tenant_id, document_id) REFERENCES documents.documents (tenant_id, id)
);

-- A draft: one principal's live working version, seen by that principal
-- alone at the document's draft URL; never reviewed, never shared.
CREATE TABLE documents.drafts (
    tenant_id    text        NOT NULL,
    document_id  text        NOT NULL,
    principal_id text        NOT NULL,
    content      text        NOT NULL CHECK (octet_length(content) <= 1048576),
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, document_id, principal_id),
    FOREIGN KEY (tenant_id, document_id) REFERENCES documents.documents (tenant_id, id)
);

-- Comments: coordination on a document, visible at once to the readers
-- of its workarea (like the feed's signals), anchored to a point or a
-- quote of one version.
CREATE TABLE documents.comments (
    tenant_id         text        NOT NULL,
    id                text        NOT NULL,
    document_id       text        NOT NULL,
    revision          integer     NOT NULL CHECK (revision >= 1),
    author_principal  text        NOT NULL,
    author_key_id     text        NOT NULL,
    body              text        NOT NULL CHECK (length(body) BETWEEN 1 AND 4000),
    anchor_offset     integer     CHECK (anchor_offset >= 0),
    anchor_quote      text        CHECK (length(anchor_quote) <= 1000),
    -- SHA-256 of the delete token, shown once at posting.
    delete_token_hash bytea       NOT NULL,
    resolved_at       timestamptz,
    resolved_by       text,
    created_at        timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, document_id) REFERENCES documents.documents (tenant_id, id)
);
CREATE INDEX comments_document ON documents.comments (tenant_id, document_id, created_at);
