-- Every read is logged (seed 000: "reads are logged like any read"), not
-- only recall: the operation says which read a row records.
ALTER TABLE retrieval.read_log
    ADD COLUMN operation text NOT NULL DEFAULT 'recall' CHECK (operation IN ('recall', 'graph'));
