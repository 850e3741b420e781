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

-- The stat cache, like git's index: what the file at `key` held when it last had this size,
-- mtime and inode. Trusted only when the mtime is older than the entry by a safety margin
-- (a "racy" entry is re-hashed). A cache, not history: it may be dropped at any time.
CREATE TABLE stat_cache (
    key         TEXT PRIMARY KEY,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    inode       INTEGER NOT NULL,
    object      TEXT NOT NULL,          -- blake3 of the raw bytes (the object id they get)
    cached_ns   INTEGER NOT NULL        -- file-system time when the bytes were read
) STRICT, WITHOUT ROWID;
