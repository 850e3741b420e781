-- hist store, schema version 3: retention (gc compaction records) and renames.

-- What each `compact` transaction did, per key and compacted path: how many change rows it
-- replaced, how many it wrote in their place, and the span they covered. A read that
-- reaches into [first_tx, last_tx) of a row here is flagged as compacted.
CREATE TABLE compaction (
    id          INTEGER PRIMARY KEY,
    tx          INTEGER NOT NULL REFERENCES tx(id),   -- the compact transaction
    key         TEXT NOT NULL,
    path        TEXT NOT NULL,          -- the compacted path (an instance of the rule's pattern)
    rule        INTEGER NOT NULL,       -- the retention rule applied
    mode        TEXT NOT NULL CHECK (mode IN ('daily', 'hourly', 'drop')),
    replaced    INTEGER NOT NULL,       -- change rows replaced
    kept        INTEGER NOT NULL,       -- change rows written in their place
    first_tx    INTEGER NOT NULL,       -- the span: first and last transaction replaced
    last_tx     INTEGER NOT NULL,
    first_at    TEXT NOT NULL,
    last_at     TEXT NOT NULL
) STRICT;
CREATE INDEX compaction_key ON compaction(key, first_tx);
CREATE INDEX compaction_tx ON compaction(tx);

-- Recorded renames (`hist mv`): later snapshots of matching keys that still use `src`
-- are translated to `dst` before they are diffed.
CREATE TABLE rename (
    id      INTEGER PRIMARY KEY,
    tx      INTEGER NOT NULL REFERENCES tx(id),
    keys    TEXT NOT NULL,              -- glob over keys
    src     TEXT NOT NULL,              -- the old path
    dst     TEXT NOT NULL               -- the new path
) STRICT;
CREATE INDEX rename_tx ON rename(tx);

CREATE VIEW compactions(tx, at, actor, key, path, mode, replaced, kept, first_at, last_at) AS
    SELECT c.tx, t.at, t.actor, c.key, c.path, c.mode, c.replaced, c.kept, c.first_at, c.last_at
    FROM compaction c JOIN tx t ON t.id = c.tx;

CREATE VIEW renames(tx, at, actor, keys, "from", "to") AS
    SELECT r.tx, t.at, t.actor, r.keys, r.src, r.dst FROM rename r JOIN tx t ON t.id = r.tx;
