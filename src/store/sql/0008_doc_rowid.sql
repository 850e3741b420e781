-- `doc` becomes a table with rowids, its text last. In a WITHOUT ROWID table a row is its
-- own key: finding any row compares keys against whole rows, and a row with a large
-- document spills into a chain of overflow pages that SQLite reads in full, page by page,
-- to make the comparison. So reading `seq` (where an as-of read starts) or `hash` and
-- `input` (the "unchanged" test of a snapshot) of a 1 MB document read 1 MB. Now the key
-- is found in a small index, and the columns before the text are found in the row's first
-- page.

DROP VIEW current;

CREATE TABLE doc_8 (
    key         TEXT NOT NULL UNIQUE,
    seq         INTEGER NOT NULL,   -- seq of the last change
    tx          INTEGER NOT NULL,   -- tx of the last change
    hash        BLOB,               -- blake3 of the canonical document (snapshot "unchanged" test)
    ckpt_seq    INTEGER NOT NULL DEFAULT 0,
    ckpt_count  INTEGER NOT NULL DEFAULT 0,  -- changes since that checkpoint
    ckpt_bytes  INTEGER NOT NULL DEFAULT 0,  -- bytes of change values since that checkpoint
    input       BLOB,               -- see 0005_input.sql
    doc         TEXT                -- canonical JSON; NULL once the document is removed
) STRICT;

INSERT INTO doc_8 (key, seq, tx, hash, ckpt_seq, ckpt_count, ckpt_bytes, input, doc)
    SELECT key, seq, tx, hash, ckpt_seq, ckpt_count, ckpt_bytes, input, doc FROM doc
    ORDER BY key;
DROP TABLE doc;
ALTER TABLE doc_8 RENAME TO doc;

CREATE VIEW current(key, doc, updated_at) AS
    SELECT d.key, d.doc, t.at FROM doc d JOIN tx t ON t.id = d.tx WHERE d.doc IS NOT NULL;
