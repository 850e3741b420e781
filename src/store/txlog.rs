//! Reading transactions: by id, by time, the newest, a key's version as of one, where an
//! as-of read starts, and the filtered list `log` shows.

use super::{Cached, Store, corrupt};
use crate::canon::ObjectId;
use crate::error::Result;
use crate::model::TxInfo;
use crate::path::DocPath;
use crate::time::{Timestamp, When};
use rusqlite::{OptionalExtension, params};

/// A transaction from `id, at, actor, reason, kind` at column `base`. A time that does not
/// parse reads as the epoch (fsck reports the chain).
pub(super) fn tx_at_column(r: &rusqlite::Row<'_>, base: usize) -> rusqlite::Result<TxInfo> {
    let at: String = r.get(base + 1)?;
    Ok(TxInfo {
        id: r.get(base)?,
        at: Timestamp::parse_rfc3339(&at).unwrap_or(Timestamp(0)),
        actor: r.get(base + 2)?,
        reason: r.get(base + 3)?,
        kind: r.get(base + 4)?,
    })
}

fn tx_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TxInfo> {
    tx_at_column(r, 0)
}

/// Where an as-of read of key number `key_id` starts: version `target` is wanted; the
/// current one is `seq_now`; the nearest checkpoint at or before `target` is version
/// `ckpt_seq` (0 and `None`: none, start from empty).
#[derive(Clone, Debug)]
pub(crate) struct ReadPlan {
    pub(crate) key_id: i64,
    pub(crate) seq_now: i64,
    pub(crate) target: i64,
    pub(crate) ckpt_seq: i64,
    pub(crate) ckpt_obj: Option<ObjectId>,
    /// The nearest checkpoint at or after `target` and before `seq_now`: its version and
    /// object (`None`: the document was absent then). A read backwards starts there.
    pub(crate) later: Option<(i64, Option<ObjectId>)>,
    /// Whether `gc` compacted any of the key's changes.
    pub(crate) compacted: bool,
    /// The key's last sealed version: changes up to it are in segments, later ones rows.
    pub(crate) sealed_seq: i64,
}

impl ReadPlan {
    /// The version a read backwards starts from: the later checkpoint, or the current one.
    pub(crate) fn back_from(&self) -> i64 {
        self.later.as_ref().map_or(self.seq_now, |l| l.0)
    }
}

/// Which transactions [`Store::log`] lists (the store's side of `LogFilter`).
#[derive(Clone, Debug, Default)]
pub(crate) struct LogQuery<'a> {
    /// Only transactions that changed this key.
    pub(crate) key: Option<&'a str>,
    /// Only transactions with a change at, above or below this path (the caller refines
    /// each transaction by its changes).
    pub(crate) path: Option<&'a DocPath>,
    pub(crate) actor: Option<&'a str>,
    pub(crate) since: Option<When>,
    pub(crate) until: Option<When>,
    pub(crate) limit: Option<usize>,
}

impl Store {
    /// The newest transaction, if any.
    pub(crate) fn newest_tx(&self) -> Result<Option<TxInfo>> {
        Ok(self
            .conn
            .cached_row(
                "SELECT id, at, actor, reason, kind FROM tx ORDER BY id DESC LIMIT 1",
                [],
                tx_row,
            )
            .optional()?)
    }

    /// The newest transaction's id and time, for the next one (`at` never goes back).
    pub(crate) fn newest_tx_at(&self) -> Result<Option<(i64, Timestamp)>> {
        let last: Option<(i64, String)> = self
            .conn
            .cached_row("SELECT id, at FROM tx ORDER BY id DESC LIMIT 1", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        last.map(|(id, at)| {
            Timestamp::parse_rfc3339(&at)
                .map(|at| (id, at))
                .ok_or_else(|| corrupt(format!("a transaction time {at:?} does not parse")))
        })
        .transpose()
    }

    /// The newest transaction's id and chained hash.
    pub(crate) fn newest_hash(&self) -> Result<Option<(i64, [u8; 32])>> {
        let newest: Option<(i64, Vec<u8>)> = self
            .conn
            .cached_row(
                "SELECT id, hash FROM tx ORDER BY id DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        Ok(newest
            .and_then(|(id, hash)| <[u8; 32]>::try_from(hash.as_slice()).ok().map(|h| (id, h))))
    }

    /// A transaction by id.
    pub(crate) fn tx(&self, id: i64) -> Result<Option<TxInfo>> {
        Ok(self
            .conn
            .cached_row(
                "SELECT id, at, actor, reason, kind FROM tx WHERE id = ?1",
                [id],
                tx_row,
            )
            .optional()?)
    }

    /// The stored chained hash of transaction `id`.
    pub(crate) fn tx_hash(&self, id: i64) -> Result<Option<Vec<u8>>> {
        Ok(self
            .conn
            .cached_row("SELECT hash FROM tx WHERE id = ?1", [id], |r| r.get(0))
            .optional()?)
    }

    /// The last transaction included by `when` (`None`: before the first transaction).
    pub(crate) fn resolve(&self, when: When) -> Result<Option<i64>> {
        match when {
            When::Tx(id) => Ok(Some(id)),
            When::At(ts) => Ok(self
                .conn
                .cached_row(
                    "SELECT id FROM tx WHERE at <= ?1 ORDER BY at DESC, id DESC LIMIT 1",
                    [ts.to_string()],
                    |r| r.get(0),
                )
                .optional()?),
        }
    }

    /// The version (`seq`) of `key` after transaction `bound`: the last change of the
    /// newest transaction up to it that changed the key (0: none did).
    pub(crate) fn version_at(&self, key: &str, bound: i64) -> Result<i64> {
        Ok(self
            .conn
            .cached_row(
                "SELECT last_seq FROM version
                 WHERE key_id = (SELECT id FROM change_key WHERE key = ?1) AND tx <= ?2
                 ORDER BY tx DESC LIMIT 1",
                params![key, bound],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0))
    }

    /// Where an as-of read of `key` after transaction `bound` starts: the versions now,
    /// wanted and of the nearest checkpoint at or before it (with its object). One
    /// statement, which also says whether `gc` compacted any of the key's changes: a read
    /// of a small document costs about as much per statement as per change replayed.
    /// `None`: the key was not written by then (or never).
    pub(crate) fn read_plan(&self, key: &str, bound: i64) -> Result<Option<ReadPlan>> {
        type Row = (
            i64,
            i64,
            Option<i64>,
            Option<i64>,
            Option<String>,
            Option<i64>,
            Option<String>,
            bool,
            i64,
        );
        let row: Option<Row> = self
            .conn
            .cached_row(
                "WITH p AS (
                     SELECT k.id AS key_id, d.seq AS seq_now, d.sealed_seq AS sealed_seq,
                            (SELECT last_seq FROM version WHERE key_id = k.id AND tx <= ?2
                             ORDER BY tx DESC LIMIT 1) AS target
                     FROM doc d JOIN change_key k ON k.key = d.key WHERE d.key = ?1)
                 SELECT p.key_id, p.seq_now, p.target, c.seq, c.object, n.seq, n.object,
                        EXISTS (SELECT 1 FROM compaction WHERE key = ?1), p.sealed_seq
                 FROM p
                 LEFT JOIN checkpoint c ON c.key = ?1 AND c.seq = (
                     SELECT max(seq) FROM checkpoint WHERE key = ?1 AND seq <= p.target)
                 LEFT JOIN checkpoint n ON n.key = ?1 AND n.seq = (
                     SELECT min(seq) FROM checkpoint
                     WHERE key = ?1 AND seq >= p.target AND seq < p.seq_now)",
                params![key, bound],
                |r| r.try_into(),
            )
            .optional()?;
        let Some((
            key_id,
            seq_now,
            Some(target),
            ckpt_seq,
            ckpt_obj,
            later_seq,
            later_obj,
            compacted,
            sealed_seq,
        )) = row
        else {
            return Ok(None);
        };
        let object = |hex: Option<String>| {
            hex.map(|hex| {
                ObjectId::from_hex(&hex)
                    .ok_or_else(|| corrupt(format!("checkpoint object id {hex:?}")))
            })
            .transpose()
        };
        Ok(Some(ReadPlan {
            key_id,
            seq_now,
            target,
            ckpt_seq: ckpt_seq.unwrap_or(0),
            ckpt_obj: object(ckpt_obj)?,
            later: match later_seq {
                Some(seq) => Some((seq, object(later_obj)?)),
                None => None,
            },
            compacted,
            sealed_seq,
        }))
    }

    /// Transactions, newest first, filtered by `q`, each with how many changes it made
    /// (all keys). With a path, every transaction that has a change at, above or below it
    /// is listed (the caller refines, and limits, since a write above the path counts only
    /// when it altered the value there): `limit` then does not apply.
    pub(crate) fn log(&self, q: &LogQuery<'_>) -> Result<Vec<(TxInfo, usize)>> {
        let mut wheres = vec!["1 = 1".to_owned()];
        let mut args: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
        // With a path, the caller refines each transaction by its changes (in either
        // tier); here only those that changed the key (or any key) are kept.
        if q.key.is_some() || q.path.is_some() {
            let mut sub = "SELECT 1 FROM version v WHERE v.tx = t.id".to_owned();
            if let Some(key) = q.key {
                args.push(Box::new(key.to_owned()));
                sub.push_str(&format!(
                    " AND v.key_id = (SELECT id FROM change_key WHERE key = ?{})",
                    args.len()
                ));
            }
            wheres.push(format!("EXISTS ({sub})"));
        }
        if let Some(actor) = q.actor {
            args.push(Box::new(actor.to_owned()));
            wheres.push(format!("t.actor = ?{}", args.len()));
        }
        for (bound, cmp) in [(q.since, ">="), (q.until, "<=")] {
            let col = match bound {
                None => continue,
                Some(When::Tx(id)) => {
                    args.push(Box::new(id));
                    "t.id"
                }
                Some(When::At(ts)) => {
                    args.push(Box::new(ts.to_string()));
                    "t.at"
                }
            };
            wheres.push(format!("{col} {cmp} ?{}", args.len()));
        }
        let limit = match q.path {
            Some(_) => -1,
            None => q.limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX)),
        };
        let sql = format!(
            "SELECT t.id, t.at, t.actor, t.reason, t.kind,
                    (SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM version v WHERE v.tx = t.id)
             FROM tx t WHERE {} ORDER BY t.id DESC LIMIT {limit}",
            wheres.join(" AND ")
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let params: Vec<&dyn rusqlite::ToSql> = args.iter().map(AsRef::as_ref).collect();
        let rows = stmt.query_map(params.as_slice(), |r| Ok((tx_row(r)?, r.get::<_, i64>(5)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (tx, count) = row?;
            out.push((tx, usize::try_from(count).unwrap_or(0)));
        }
        Ok(out)
    }
}
