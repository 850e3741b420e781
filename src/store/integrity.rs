//! What `fsck` reads to check the log: every transaction's stored hash, change rows that
//! no version row accounts for, keys with changes but no current state, every document
//! row, and every object a row names.

use super::Store;
use super::segments::SegmentRow;
use crate::error::Result;

/// A current-state row as `fsck` compares it with the replayed log.
#[derive(Clone, Debug)]
pub(crate) struct DocRow {
    pub(crate) key: String,
    pub(crate) text: Option<String>,
    pub(crate) seq: i64,
    pub(crate) hash: Option<Vec<u8>>,
    pub(crate) sealed_seq: i64,
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

    /// The first transaction whose tail rows do not match its version rows: a row added
    /// outside hist, or moved to another transaction or key, is not in the hash of any
    /// transaction (the hash reads a transaction's changes through `version`). Versions
    /// sealed into segments are checked against the segments ([`Store::versions`]).
    pub(crate) fn stray_tx(&self) -> Result<Option<i64>> {
        Ok(self.conn.query_row(
            "WITH tail_version AS (
                 SELECT v.* FROM version v JOIN change_key k ON k.id = v.key_id
                 LEFT JOIN doc d ON d.key = k.key WHERE v.first_seq > coalesce(d.sealed_seq, 0))
             SELECT min(tx) FROM (
                 SELECT tx FROM (
                     SELECT key_id, tx, min(seq), max(seq), count(*) FROM change_log
                     GROUP BY key_id, tx
                     EXCEPT
                     SELECT key_id, tx, first_seq, last_seq, last_seq - first_seq + 1
                     FROM tail_version)
                 UNION ALL
                 SELECT tx FROM (
                     SELECT key_id, tx, first_seq, last_seq, last_seq - first_seq + 1
                     FROM tail_version
                     EXCEPT
                     SELECT key_id, tx, min(seq), max(seq), count(*) FROM change_log
                     GROUP BY key_id, tx))",
            [],
            |r| r.get(0),
        )?)
    }

    /// The version rows of key `key_id`: transaction, first and last version, in order.
    pub(crate) fn versions(&self, key_id: i64) -> Result<Vec<(i64, i64, i64)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT tx, first_seq, last_seq FROM version WHERE key_id = ?1 ORDER BY first_seq",
        )?;
        let rows = stmt
            .query_map([key_id], |r| r.try_into())?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
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
            .prepare("SELECT key, doc, seq, hash, sealed_seq FROM doc ORDER BY key")?;
        let rows = stmt
            .query_map([], |r| {
                Ok(DocRow {
                    key: r.get(0)?,
                    text: r.get(1)?,
                    seq: r.get(2)?,
                    hash: r.get(3)?,
                    sealed_seq: r.get(4)?,
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
             UNION SELECT object FROM file_version WHERE object IS NOT NULL
             UNION SELECT object FROM segment",
        )?;
        let ids = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ids)
    }

    /// What is wrong with segment `seg` (`None`: nothing): it must decode (its table of
    /// frames matching its frames), and hold the versions, transactions, paths and moves its
    /// index row says.
    pub(crate) fn check_segment(&self, seg: &SegmentRow) -> Result<Option<String>> {
        let path = hist_segment::objects::path_of(self.objects.dir(), &seg.object);
        let file = match std::fs::read(path) {
            Ok(file) => file,
            Err(e) => return Ok(Some(format!("cannot be read: {e}"))),
        };
        let decoded = match hist_segment::check(&file) {
            Ok(decoded) => decoded,
            Err(e) => return Ok(Some(e.to_string())),
        };
        let index: (i64, i64, i64, i64, i64) = self.conn.query_row(
            "SELECT first_seq, last_seq, first_tx, last_tx, moves FROM segment
             WHERE key_id = ?1 AND first_seq = ?2",
            [seg.key_id, seg.first_seq],
            |r| r.try_into(),
        )?;
        let rows: Vec<_> = decoded.rows().collect();
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
            return Ok(Some("it holds no change".to_owned()));
        };
        let moves = rows
            .iter()
            .filter(|r| r.op == hist_segment::Op::Move)
            .count();
        let found = (
            first.seq,
            last.seq,
            first.tx,
            last.tx,
            i64::try_from(moves).unwrap_or(i64::MAX),
        );
        if found != index {
            return Ok(Some(format!(
                "it holds versions {}..={} of transactions {}..={} ({} moves), its index row says \
                 {}..={} of {}..={} ({})",
                found.0,
                found.1,
                found.2,
                found.3,
                found.4,
                index.0,
                index.1,
                index.2,
                index.3,
                index.4
            )));
        }
        if hist_segment::pathset::encode(&decoded.path_ids()) != seg.paths {
            return Ok(Some(
                "its index row lists other paths than it holds".to_owned(),
            ));
        }
        Ok(None)
    }
}
