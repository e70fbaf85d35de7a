-- contexts/retrieval: the search corpus (issue 15, seed 002's search)
-- beside recall's entries. Other contexts push their searchable rows here
-- through retrieval's port in the unit of work that changes them: feed
-- events (coordination records, visible at once to every reader of their
-- workarea) and session brain entries (their owner's alone, found through
-- the session). Promoted knowledge-base pages are searched in
-- retrieval.entries, where their promotion put them.
CREATE TABLE retrieval.search_rows (
    tenant_id        text        NOT NULL,
    corpus           text        NOT NULL CHECK (corpus IN ('event', 'brain')),
    row_id           text        NOT NULL,
    workarea_id      text        NOT NULL,
    workarea_id_path ltree       NOT NULL,
    -- A brain entry's session (only its owner finds it).
    session_id       text,
    -- The event kind, or the brain entry's path.
    title            text        NOT NULL,
    -- The text as searched: the first 256 KiB.
    body             text        NOT NULL,
    tsv              tsvector    NOT NULL,
    -- Who wrote it: an event's principal, a brain entry's key.
    actor            text        NOT NULL,
    at               timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, corpus, row_id),
    CHECK ((corpus = 'brain') = (session_id IS NOT NULL))
);
CREATE INDEX search_rows_tsv ON retrieval.search_rows USING gin (tsv);
CREATE INDEX search_rows_path ON retrieval.search_rows USING gist (workarea_id_path);
CREATE INDEX search_rows_session ON retrieval.search_rows (tenant_id, session_id) WHERE session_id IS NOT NULL;
