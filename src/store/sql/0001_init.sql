-- hist store, schema version 1.
-- The change log is the primary object; `doc` is the current state it implies.

CREATE TABLE tx (
    id      INTEGER PRIMARY KEY,
    at      TEXT NOT NULL,          -- 2026-08-19T16:40:00.000000Z, never earlier than the tx before
    actor   TEXT NOT NULL,
    reason  TEXT,
    kind    TEXT NOT NULL,
    hash    BLOB NOT NULL           -- blake3 chained over the previous tx's hash and this tx's rows
) STRICT;
CREATE INDEX tx_at ON tx(at);

CREATE TABLE change_log (
    id      INTEGER PRIMARY KEY,
    tx      INTEGER NOT NULL REFERENCES tx(id),
    key     TEXT NOT NULL,
    seq     INTEGER NOT NULL,       -- 1, 2, 3… per key: the document's version after this change
    path    TEXT NOT NULL,
    op      TEXT NOT NULL CHECK (op IN ('add', 'remove', 'replace', 'move')),
    old     TEXT,                   -- canonical JSON, or NULL when absent or stored as an object
    new     TEXT,
    old_obj TEXT,                   -- object id when the value is large
    new_obj TEXT
) STRICT;
CREATE UNIQUE INDEX change_key_seq ON change_log(key, seq);
CREATE INDEX change_key_path ON change_log(key, path);
CREATE INDEX change_tx ON change_log(tx);
CREATE INDEX change_key_tx ON change_log(key, tx, seq);

CREATE TABLE doc (
    key         TEXT PRIMARY KEY,
    doc         TEXT,               -- canonical JSON; NULL once the document is removed
    seq         INTEGER NOT NULL,   -- seq of the last change
    tx          INTEGER NOT NULL,   -- tx of the last change
    hash        BLOB,               -- blake3 of the canonical document (snapshot "unchanged" test)
    ckpt_seq    INTEGER NOT NULL DEFAULT 0,
    ckpt_count  INTEGER NOT NULL DEFAULT 0,  -- changes since that checkpoint
    ckpt_bytes  INTEGER NOT NULL DEFAULT 0   -- bytes of change values since that checkpoint
) STRICT, WITHOUT ROWID;

CREATE TABLE checkpoint (
    key     TEXT NOT NULL,
    seq     INTEGER NOT NULL,
    tx      INTEGER NOT NULL,
    object  TEXT,                   -- object id of the canonical document; NULL when absent
    PRIMARY KEY (key, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE check_log (
    id      INTEGER PRIMARY KEY,
    key     TEXT NOT NULL,
    at      TEXT NOT NULL,
    actor   TEXT NOT NULL,
    hash    TEXT NOT NULL
) STRICT;
CREATE INDEX check_key ON check_log(key, id);

CREATE TABLE rule (
    id          INTEGER PRIMARY KEY,
    tx          INTEGER NOT NULL REFERENCES tx(id),
    kind        TEXT NOT NULL,
    pattern     TEXT NOT NULL,
    keys        TEXT,
    spec        TEXT NOT NULL,      -- JSON parameters of the rule
    removed_tx  INTEGER REFERENCES tx(id)
) STRICT;

CREATE VIEW transactions(id, at, actor, reason, kind) AS
    SELECT id, at, actor, reason, kind FROM tx;

CREATE VIEW changes(id, tx, at, actor, reason, key, path, op, old, new) AS
    SELECT c.id, c.tx, t.at, t.actor, t.reason, c.key, c.path, c.op,
           CASE WHEN c.old_obj IS NOT NULL THEN json_object('$hist_object', c.old_obj) ELSE c.old END,
           CASE WHEN c.new_obj IS NOT NULL THEN json_object('$hist_object', c.new_obj) ELSE c.new END
    FROM change_log c JOIN tx t ON t.id = c.tx;

CREATE VIEW current(key, doc, updated_at) AS
    SELECT d.key, d.doc, t.at FROM doc d JOIN tx t ON t.id = d.tx WHERE d.doc IS NOT NULL;

CREATE VIEW checks(key, at, actor, hash) AS
    SELECT key, at, actor, hash FROM check_log;
