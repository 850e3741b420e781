-- Schema 9: the change log in two tiers, paths interned.
--
-- A path is stored once, in `path`, and named by its number everywhere else. Recent changes
-- stay rows of `change_log` (the tail); older ones are sealed into segments: objects that
-- hold many consecutive changes of one key column by column (hist_segment), indexed in
-- `segment` by key, versions, transactions, times and the paths they touch. A key's rows
-- and segments never overlap: `doc.sealed_seq` is the last version sealed.
--
-- The views read both tiers through the virtual table `hist_changes`, which `hist sql`
-- and hist's SQLite extension provide; anywhere else a query on `changes` fails ("no such
-- table"), never a partial answer from the tail alone.

CREATE TABLE path (
    id      INTEGER PRIMARY KEY,
    path    TEXT NOT NULL UNIQUE
) STRICT;

-- Numbered in the order the paths first appear, so a segment's paths are runs of numbers.
INSERT INTO path (path) SELECT path FROM change_log GROUP BY path ORDER BY min(id);

DROP VIEW changes;

-- AUTOINCREMENT: a sealed change leaves the table, and its id must never be given again.
CREATE TABLE change_log_9 (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    tx      INTEGER NOT NULL REFERENCES tx(id),
    key_id  INTEGER NOT NULL REFERENCES change_key(id),
    seq     INTEGER NOT NULL,       -- 1, 2, 3… per key: the document's version after this change
    path_id INTEGER NOT NULL REFERENCES path(id),
    op      TEXT NOT NULL CHECK (op IN ('add', 'remove', 'replace', 'move')),
    old     TEXT,                   -- canonical JSON, or NULL when absent or stored as an object
    new     TEXT,
    old_obj TEXT,                   -- object id when the value is large
    new_obj TEXT
) STRICT;

INSERT INTO change_log_9 (id, tx, key_id, seq, path_id, op, old, new, old_obj, new_obj)
    SELECT c.id, c.tx, c.key_id, c.seq, p.id, c.op, c.old, c.new, c.old_obj, c.new_obj
    FROM change_log c JOIN path p ON p.path = c.path ORDER BY c.id;
DROP TABLE change_log;
ALTER TABLE change_log_9 RENAME TO change_log;
CREATE UNIQUE INDEX change_key_seq ON change_log(key_id, seq);
CREATE INDEX change_key_path ON change_log(key_id, path_id, seq);

CREATE TABLE segment (
    key_id      INTEGER NOT NULL REFERENCES change_key(id),
    first_seq   INTEGER NOT NULL,   -- the versions it holds: first_seq..=last_seq
    last_seq    INTEGER NOT NULL,
    first_tx    INTEGER NOT NULL,   -- the transactions of its first and last change
    last_tx     INTEGER NOT NULL,
    first_at    TEXT NOT NULL,      -- their times
    last_at     TEXT NOT NULL,
    moves       INTEGER NOT NULL,   -- how many of its changes are moves (renames)
    object      TEXT NOT NULL,      -- the object holding it
    paths       BLOB NOT NULL,      -- the numbers of the paths it touches (hist_segment::pathset)
    PRIMARY KEY (key_id, first_seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX segment_tx ON segment(last_tx);

-- A checkpoint may be compressed against an earlier one of the same document, its base.
ALTER TABLE checkpoint ADD COLUMN base_object TEXT;

-- `doc` gets `sealed_seq`, before the text (see 0008_doc_rowid.sql).
DROP VIEW current;
CREATE TABLE doc_9 (
    key         TEXT NOT NULL UNIQUE,
    seq         INTEGER NOT NULL,   -- seq of the last change
    tx          INTEGER NOT NULL,   -- tx of the last change
    hash        BLOB,               -- blake3 of the canonical document (snapshot "unchanged" test)
    ckpt_seq    INTEGER NOT NULL DEFAULT 0,
    ckpt_count  INTEGER NOT NULL DEFAULT 0,  -- changes since that checkpoint
    ckpt_bytes  INTEGER NOT NULL DEFAULT 0,  -- bytes of change values since that checkpoint
    input       BLOB,               -- see 0005_input.sql
    sealed_seq  INTEGER NOT NULL DEFAULT 0,  -- the last version sealed into a segment
    doc         TEXT                -- canonical JSON; NULL once the document is removed
) STRICT;
INSERT INTO doc_9 (rowid, key, seq, tx, hash, ckpt_seq, ckpt_count, ckpt_bytes, input, doc)
    SELECT rowid, key, seq, tx, hash, ckpt_seq, ckpt_count, ckpt_bytes, input, doc FROM doc
    ORDER BY rowid;
DROP TABLE doc;
ALTER TABLE doc_9 RENAME TO doc;
CREATE VIEW current(key, doc, updated_at) AS
    SELECT d.key, d.doc, t.at FROM doc d JOIN tx t ON t.id = d.tx WHERE d.doc IS NOT NULL;

CREATE VIEW changes(id, tx, at, actor, reason, key, path, op, old, new) AS
    SELECT id, tx, at, actor, reason, key, path, op, old, new FROM hist_changes;
