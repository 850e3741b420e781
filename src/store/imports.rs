//! Where each import from a git repository got to (`git_import`, schema 10): read before
//! an import starts, written with the snapshots of each batch.

use super::{Cached, Store, corrupt};
use crate::error::Result;
use crate::time::Timestamp;
use rusqlite::{OptionalExtension, params};

/// Where an import of one file of one git repository under one key got to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GitMark {
    /// The last commit gone through (full id).
    pub(crate) commit: String,
    /// The time the newest version was recorded at.
    pub(crate) at: Timestamp,
}

impl Store {
    /// Where the import of `file` of the git repository `repo` under `key` got to, if it
    /// ever ran.
    pub(crate) fn git_mark(&self, repo: &str, file: &str, key: &str) -> Result<Option<GitMark>> {
        let row: Option<(String, String)> = self
            .conn
            .cached_row(
                "SELECT last_commit, at FROM git_import WHERE repo = ?1 AND file = ?2 AND key = ?3",
                params![repo, file, key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        row.map(|(commit, at)| {
            let at = Timestamp::parse_rfc3339(&at)
                .ok_or_else(|| corrupt(format!("git import of {file}: a time {at:?}")))?;
            Ok(GitMark { commit, at })
        })
        .transpose()
    }

    /// Records where the import of `file` of `repo` under `key` got to. Inside a batch it
    /// commits with the batch.
    pub(crate) fn set_git_mark(
        &self,
        repo: &str,
        file: &str,
        key: &str,
        mark: &GitMark,
    ) -> Result<()> {
        self.conn.cached_exec(
            "INSERT INTO git_import (repo, file, key, last_commit, at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (repo, file, key) DO UPDATE SET last_commit = ?4, at = ?5",
            params![repo, file, key, mark.commit, mark.at.to_string()],
        )?;
        Ok(())
    }
}
