//! What `fsck` reads to check the log: every transaction's stored hash, change rows that
//! no version row accounts for, keys with changes but no current state, every document
//! row, and every object a row names.

use super::Store;
use crate::error::Result;

/// A current-state row as `fsck` compares it with the replayed log.
#[derive(Clone, Debug)]
pub(crate) struct DocRow {
    pub(crate) key: String,
    pub(crate) text: Option<String>,
    pub(crate) seq: i64,
    pub(crate) hash: Option<Vec<u8>>,
}

impl Store {
    /// Every transaction's id, time (as stored) and stored hash, oldest first.
    pub(crate) fn tx_chain(&self) -> Result<Vec<(i64, String, Vec<u8>)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, at, hash FROM tx ORDER BY id")?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// The newest transaction id, if any.
    pub(crate) fn max_tx_id(&self) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row("SELECT max(id) FROM tx", [], |r| r.get(0))?)
    }

    /// The first transaction whose change rows do not match its version rows: a row added
    /// outside hist, or moved to another transaction or key, is not in the hash of any
    /// transaction (the hash reads a transaction's rows through `version`).
    pub(crate) fn stray_tx(&self) -> Result<Option<i64>> {
        Ok(self.conn.query_row(
            "SELECT min(tx) FROM (
                 SELECT tx FROM (
                     SELECT key_id, tx, min(seq), max(seq), count(*) FROM change_log
                     GROUP BY key_id, tx
                     EXCEPT
                     SELECT key_id, tx, first_seq, last_seq, last_seq - first_seq + 1
                     FROM version)
                 UNION ALL
                 SELECT tx FROM (
                     SELECT key_id, tx, first_seq, last_seq, last_seq - first_seq + 1
                     FROM version
                     EXCEPT
                     SELECT key_id, tx, min(seq), max(seq), count(*) FROM change_log
                     GROUP BY key_id, tx))",
            [],
            |r| r.get(0),
        )?)
    }

    /// Keys whose log has changes but that current state has no row for.
    pub(crate) fn orphan_keys(&self) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(
            "SELECT key FROM change_key WHERE key NOT IN (SELECT key FROM doc)
                 AND id IN (SELECT key_id FROM change_log) ORDER BY key",
        )?;
        let keys = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(keys)
    }

    /// Every current-state row, by key.
    pub(crate) fn doc_rows(&self) -> Result<Vec<DocRow>> {
        let mut stmt = self
            .conn
            .prepare("SELECT key, doc, seq, hash FROM doc ORDER BY key")?;
        let rows = stmt
            .query_map([], |r| {
                Ok(DocRow {
                    key: r.get(0)?,
                    text: r.get(1)?,
                    seq: r.get(2)?,
                    hash: r.get(3)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Every object id the log, the checkpoints and the tracked files name (hex).
    pub(crate) fn named_objects(&self) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(
            "SELECT object FROM checkpoint WHERE object IS NOT NULL
             UNION SELECT old_obj FROM change_log WHERE old_obj IS NOT NULL
             UNION SELECT new_obj FROM change_log WHERE new_obj IS NOT NULL
             UNION SELECT object FROM file_version WHERE object IS NOT NULL",
        )?;
        let ids = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ids)
    }
}
