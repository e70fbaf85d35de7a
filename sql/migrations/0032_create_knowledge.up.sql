-- The knowledge base (issue 15): a page is a claim of kind 'page' whose
-- claim key is its path under /fs/; its versions are admission rows like
-- any claim's, held until a different identity ratifies them, and any
-- writer may add one. page_version is the SHA-256 of a page version's
-- text (an empty text is a deletion's tombstone); base_version is the
-- promoted head a version was written against ('absent' for a new page),
-- checked when it is submitted and again when it is promoted.
ALTER TABLE admission.artifacts DROP CONSTRAINT artifacts_kind_check;
ALTER TABLE admission.artifacts ADD CONSTRAINT artifacts_kind_check
    CHECK (kind IN ('memory', 'derived_fact', 'steering', 'page'));
ALTER TABLE admission.artifacts ADD COLUMN page_version text
    CHECK (page_version ~ '^sha256:[0-9a-f]{64}$');
ALTER TABLE admission.artifacts ADD COLUMN base_version text
    CHECK (base_version = 'absent' OR base_version ~ '^sha256:[0-9a-f]{64}$');
ALTER TABLE admission.artifacts ADD CONSTRAINT artifacts_page_fields
    CHECK ((kind = 'page') = (page_version IS NOT NULL) AND (kind = 'page' OR base_version IS NULL));
-- A workarea's pages and one page's versions, newest first.
CREATE INDEX artifacts_pages ON admission.artifacts (tenant_id, workarea_id, claim_key, version DESC)
    WHERE kind = 'page';

-- contexts/knowledge: what a page version carries beside its text.
CREATE SCHEMA knowledge;
CREATE TABLE knowledge.versions (
    tenant_id      text        NOT NULL,
    artifact_id    text        NOT NULL,
    workarea_id    text        NOT NULL,
    path           text        NOT NULL CHECK (path ~ '^/fs/.' AND octet_length(path) <= 512),
    -- The session a brain_promote copied the page from.
    source_session text,
    -- When the page should be looked at again (session_brief's stale pages).
    stale_after    timestamptz,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, artifact_id)
);
