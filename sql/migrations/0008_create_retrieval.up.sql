-- contexts/retrieval: the serving tier. One row per promoted claim, with
-- its full-text vector and its embedding; rows appear in the transaction
-- that promotes and vanish in the one that demotes or erases.
CREATE SCHEMA retrieval;

CREATE TABLE retrieval.tenant_settings (
    tenant_id    text     PRIMARY KEY,
    fts_language regconfig NOT NULL DEFAULT 'english'
);

-- Embeddings of held claims, computed at submission outside the database
-- transaction and carried in, so promotion needs no embedding call.
CREATE TABLE retrieval.staged (
    tenant_id       text        NOT NULL,
    artifact_id     text        NOT NULL,
    -- Untyped halfvec: the dimension belongs to embedding_model; each model
    -- gets its own partial HNSW index over the typed cast.
    embedding       halfvec,
    embedding_model text,
    staged_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, artifact_id)
);

CREATE TABLE retrieval.entries (
    tenant_id        text        NOT NULL,
    artifact_id      text        NOT NULL,
    workarea_id      text        NOT NULL,
    workarea_id_path ltree       NOT NULL,
    kind             text        NOT NULL,
    claim_key        text        NOT NULL,
    version          integer     NOT NULL,
    text             text        NOT NULL,
    tsv              tsvector    NOT NULL,
    embedding        halfvec,
    embedding_model  text,
    promoted_at      timestamptz NOT NULL,
    simulation_id    text,
    attachments      jsonb       NOT NULL DEFAULT '[]',
    PRIMARY KEY (tenant_id, artifact_id)
);
CREATE INDEX entries_tsv ON retrieval.entries USING gin (tsv);
CREATE INDEX entries_path ON retrieval.entries USING gist (workarea_id_path);
CREATE INDEX entries_steering ON retrieval.entries (tenant_id, promoted_at) WHERE kind = 'steering';
-- The built-in embedder's index (cosine over halfvec(384)). pgvector 0.8.0
-- has a bug in parallel HNSW builds; the cluster runs with
-- max_parallel_maintenance_workers = 0 and so does this statement.
SET LOCAL max_parallel_maintenance_workers = 0;
CREATE INDEX entries_hnsw_builtin_384 ON retrieval.entries
    USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 64)
    WHERE embedding_model = 'oml-builtin-v1-384';

-- Document frequencies of full-text lexemes and the corpus size, per
-- tenant: query-side rarity weights and the pruning of very common
-- lexemes before ranking.
CREATE TABLE retrieval.term_df (
    tenant_id text    NOT NULL,
    term      text    NOT NULL,
    df        integer NOT NULL CHECK (df >= 0),
    PRIMARY KEY (tenant_id, term)
);
CREATE TABLE retrieval.corpus (
    tenant_id text   PRIMARY KEY,
    docs      bigint NOT NULL CHECK (docs >= 0)
);

-- Rows per workarea, so the vector leg chooses exact search or HNSW from
-- maintained counts rather than from the planner's estimates.
CREATE TABLE retrieval.workarea_counts (
    tenant_id   text    NOT NULL,
    workarea_id text    NOT NULL,
    id_path     ltree   NOT NULL,
    n           integer NOT NULL CHECK (n >= 0),
    PRIMARY KEY (tenant_id, workarea_id)
);
CREATE INDEX workarea_counts_path ON retrieval.workarea_counts USING gist (id_path);

-- Every recall: who asked, where, a digest of what, what it returned.
CREATE TABLE retrieval.read_log (
    tenant_id    text        NOT NULL,
    id           bigint      GENERATED ALWAYS AS IDENTITY,
    key_id       text        NOT NULL,
    workarea_id  text        NOT NULL,
    query_sha256 bytea       NOT NULL,
    returned     text[]      NOT NULL,
    at           timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX read_log_at ON retrieval.read_log (tenant_id, at);
