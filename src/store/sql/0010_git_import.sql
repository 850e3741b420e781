-- Schema 10: where each import from a git repository got to (`hist import --git`), so that
-- running it again records only the commits that came since.
--
-- One row per (repository, file, key): the last commit of the branch's first-parent history
-- the import went through, and the time its versions were recorded at (committer times
-- going backwards are raised, and a resumed import goes on raising from there). It is
-- written in the same SQLite transaction as the snapshots of that commit, so it never
-- names a commit whose versions are not recorded, nor misses one that is.

CREATE TABLE git_import (
    repo        TEXT NOT NULL,      -- the repository's git directory, absolute
    file        TEXT NOT NULL,      -- the file's path from the repository's top
    key         TEXT NOT NULL,      -- the document it is imported under
    last_commit TEXT NOT NULL,      -- the full id of the last commit gone through
    at          TEXT NOT NULL,      -- the time the newest version was recorded at
    PRIMARY KEY (repo, file, key)
) STRICT, WITHOUT ROWID;
