-- A smaller change log: a change row names its key by a number (the key's text was stored
-- in the row and again in each of its four indexes), and the two indexes that found a key's
-- or a transaction's changes by tx are replaced by `version`, one row per key and
-- transaction instead of one index entry per change. The `changes` view is unchanged.

CREATE TABLE change_key (
    id      INTEGER PRIMARY KEY,
    key     TEXT NOT NULL UNIQUE
) STRICT;

-- The changes one transaction made to one key: seq first_seq..=last_seq of that key.
CREATE TABLE version (
    key_id      INTEGER NOT NULL REFERENCES change_key(id),
    tx          INTEGER NOT NULL REFERENCES tx(id),
    first_seq   INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    PRIMARY KEY (key_id, tx)
) STRICT, WITHOUT ROWID;

CREATE TABLE change_log_7 (
    id      INTEGER PRIMARY KEY,
    tx      INTEGER NOT NULL REFERENCES tx(id),
    key_id  INTEGER NOT NULL REFERENCES change_key(id),
    seq     INTEGER NOT NULL,       -- 1, 2, 3… per key: the document's version after this change
    path    TEXT NOT NULL,
    op      TEXT NOT NULL CHECK (op IN ('add', 'remove', 'replace', 'move')),
    old     TEXT,                   -- canonical JSON, or NULL when absent or stored as an object
    new     TEXT,
    old_obj TEXT,                   -- object id when the value is large
    new_obj TEXT
) STRICT;

INSERT INTO change_key (key) SELECT DISTINCT key FROM change_log ORDER BY key;
INSERT INTO change_log_7 (id, tx, key_id, seq, path, op, old, new, old_obj, new_obj)
    SELECT c.id, c.tx, k.id, c.seq, c.path, c.op, c.old, c.new, c.old_obj, c.new_obj
    FROM change_log c JOIN change_key k ON k.key = c.key ORDER BY c.id;
INSERT INTO version (key_id, tx, first_seq, last_seq)
    SELECT key_id, tx, min(seq), max(seq) FROM change_log_7 GROUP BY key_id, tx;

DROP VIEW changes;
DROP TABLE change_log;
ALTER TABLE change_log_7 RENAME TO change_log;
CREATE UNIQUE INDEX change_key_seq ON change_log(key_id, seq);
CREATE INDEX change_key_path ON change_log(key_id, path, seq);
CREATE INDEX version_tx ON version(tx);

CREATE VIEW changes(id, tx, at, actor, reason, key, path, op, old, new) AS
    SELECT c.id, c.tx, t.at, t.actor, t.reason, k.key, c.path, c.op,
           CASE WHEN c.old_obj IS NOT NULL THEN json_object('$hist_object', c.old_obj) ELSE c.old END,
           CASE WHEN c.new_obj IS NOT NULL THEN json_object('$hist_object', c.new_obj) ELSE c.new END
    FROM change_log c JOIN change_key k ON k.id = c.key_id JOIN tx t ON t.id = c.tx;
