-- hist store, schema version 2: tracked files (`hist track`, `status`, `commit`, `restore`).
-- The parsed content of a tracked file is an ordinary document under its key (the path
-- relative to the repository root); these tables add what a directory of files needs.

-- The tracked set: the files and directories the user named, and the ones excluded inside
-- them (`hist untrack`). The most specific entry above a path decides whether it is tracked.
CREATE TABLE track_spec (
    path    TEXT PRIMARY KEY,           -- relative to the root, '/' separators; '' = the root
    include INTEGER NOT NULL CHECK (include IN (0, 1))
) STRICT, WITHOUT ROWID;

-- Every recorded version of a tracked file: its raw bytes as an object, so a restore is
-- byte-exact (comments and formatting included).
CREATE TABLE file_version (
    key     TEXT NOT NULL,
    tx      INTEGER NOT NULL REFERENCES tx(id) DEFERRABLE INITIALLY DEFERRED,
    object  TEXT,                       -- object id of the raw bytes; NULL: the file was deleted
    size    INTEGER,                    -- bytes (NULL when deleted)
    PRIMARY KEY (key, tx)
) STRICT, WITHOUT ROWID;

-- The index, like git's: one row per tracked file that exists in its newest version (a
-- deletion removes the row), with that version and the stat cache: what the file held when
-- hist last read it with this size, mtime and inode. The cache columns are trusted only when
-- the mtime is older than `cached_ns` by a safety margin (a "racy" entry is re-hashed).
-- `object` always equals the newest `file_version` row's; the cache columns may be dropped.
CREATE TABLE track_index (
    key         TEXT PRIMARY KEY,
    object      BLOB NOT NULL,          -- blake3 of the newest version's bytes (its object id)
    tx          INTEGER NOT NULL,       -- the transaction that recorded it
    size        INTEGER,                -- the stat cache (NULL: none)
    mtime_ns    INTEGER,
    inode       INTEGER,
    seen        BLOB,                   -- blake3 of the bytes the file held with that stat
    cached_ns   INTEGER                 -- file-system time when those bytes were read
) STRICT, WITHOUT ROWID;
