//! Reading the change log: a key's changes by version (`seq`), by path, its moves, a
//! transaction's changes, and the whole log in order.
//!
//! A key's changes are numbered 1, 2, 3… (`seq`, dense: `gc` renumbers what it rewrites),
//! so a range of versions `after < seq <= upto` is how every read asks for them.

use super::txlog::tx_at_column;
use super::{Cached, Store, Stored, corrupt};
use crate::error::{Error, Result};
use crate::model::{Op, TxInfo};
use crate::path::DocPath;
use crate::time::When;
use rusqlite::{OptionalExtension, params};
use std::ops::ControlFlow;

/// One change row as stored, its values not loaded.
#[derive(Clone, Debug)]
pub(crate) struct StoredChange {
    /// The row's id: the order changes were recorded in, across keys.
    pub(crate) id: i64,
    /// The key's version after this change.
    pub(crate) seq: i64,
    /// The transaction.
    pub(crate) tx: i64,
    /// Where, as text.
    pub(crate) path: String,
    pub(crate) op: Op,
    pub(crate) old: Stored,
    pub(crate) new: Stored,
}

impl StoredChange {
    /// The path, parsed.
    pub(crate) fn doc_path(&self) -> Result<DocPath> {
        stored_path(&self.path)
    }
}

/// A change without its values: what blame needs to attribute leaves (`moved_from`: the
/// source of a move, as JSON text).
#[derive(Clone, Debug)]
pub(crate) struct ChangeHead {
    pub(crate) id: i64,
    pub(crate) seq: i64,
    pub(crate) tx: i64,
    pub(crate) path: String,
    pub(crate) op: Op,
    pub(crate) moved_from: Option<String>,
}

/// One side of a change, for replaying it: `value` is `new` going forward, `old` going
/// backward.
pub(crate) struct SideChange {
    pub(crate) path: String,
    pub(crate) op: Op,
    pub(crate) value: Stored,
}

/// Which value of each change a replay reads, and so which way it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// `new`, oldest first (forward).
    New,
    /// `old`, newest first (backward).
    Old,
}

/// Oldest or newest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    OldestFirst,
    NewestFirst,
}

pub(crate) fn stored_path(text: &str) -> Result<DocPath> {
    DocPath::parse(text).map_err(|e| Error::Corrupt(format!("stored path {text:?}: {e}")))
}

pub(crate) fn stored_op(text: &str) -> Result<Op> {
    Op::parse(text).ok_or_else(|| corrupt(format!("unknown op {text:?}")))
}

/// A change row from `id, seq, tx, path, op, old, new, old_obj, new_obj` at `base`.
fn change_at(r: &rusqlite::Row<'_>, base: usize) -> Result<StoredChange> {
    Ok(StoredChange {
        id: r.get(base)?,
        seq: r.get(base + 1)?,
        tx: r.get(base + 2)?,
        path: r.get(base + 3)?,
        op: stored_op(&r.get::<_, String>(base + 4)?)?,
        old: Stored::from_columns(r.get(base + 5)?, r.get(base + 7)?)?,
        new: Stored::from_columns(r.get(base + 6)?, r.get(base + 8)?)?,
    })
}

const CHANGE_COLUMNS: &str = "c.id, c.seq, c.tx, c.path, c.op, c.old, c.new, c.old_obj, c.new_obj";

fn head_at(r: &rusqlite::Row<'_>) -> Result<ChangeHead> {
    Ok(ChangeHead {
        id: r.get(0)?,
        seq: r.get(1)?,
        tx: r.get(2)?,
        path: r.get(3)?,
        op: stored_op(&r.get::<_, String>(4)?)?,
        moved_from: r.get(5)?,
    })
}

impl Store {
    /// The number the change log names `key` by (`None`: it has no change).
    pub(crate) fn key_id(&self, key: &str) -> Result<Option<i64>> {
        Ok(self
            .conn
            .cached_row("SELECT id FROM change_key WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// The changes of key `key_id` with `after < seq <= upto`.
    pub(crate) fn changes(
        &self,
        key_id: i64,
        after: i64,
        upto: i64,
        order: Order,
    ) -> Result<Vec<StoredChange>> {
        let sql = match order {
            Order::OldestFirst => {
                "SELECT c.id, c.seq, c.tx, c.path, c.op, c.old, c.new, c.old_obj, c.new_obj
                 FROM change_log c WHERE c.key_id = ?1 AND c.seq > ?2 AND c.seq <= ?3
                 ORDER BY c.seq"
            }
            Order::NewestFirst => {
                "SELECT c.id, c.seq, c.tx, c.path, c.op, c.old, c.new, c.old_obj, c.new_obj
                 FROM change_log c WHERE c.key_id = ?1 AND c.seq > ?2 AND c.seq <= ?3
                 ORDER BY c.seq DESC"
            }
        };
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = stmt.query(params![key_id, after, upto])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(change_at(r, 0)?);
        }
        Ok(out)
    }

    /// One side of the changes of key `key_id` with `after < seq <= upto`, for a replay:
    /// `new` oldest first, or `old` newest first. Only the columns the replay needs are
    /// read, and path and op in place.
    pub(crate) fn side_changes(
        &self,
        key_id: i64,
        after: i64,
        upto: i64,
        side: Side,
    ) -> Result<Vec<SideChange>> {
        let sql = match side {
            Side::Old => {
                "SELECT path, op, old, old_obj FROM change_log
                 WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq DESC"
            }
            Side::New => {
                "SELECT path, op, new, new_obj FROM change_log
                 WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq"
            }
        };
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = stmt.query(params![key_id, after, upto])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let text = |i| {
                row.get_ref(i)?
                    .as_str()
                    .map_err(|e| corrupt(format!("a stored change: {e}")))
            };
            out.push(SideChange {
                path: text(0)?.to_owned(),
                op: stored_op(text(1)?)?,
                value: Stored::from_columns(row.get(2)?, row.get(3)?)?,
            });
        }
        Ok(out)
    }

    /// The changes of key `key_id` with `after < seq <= upto` at `path`, at one of its
    /// ancestors or below it (and, `with_moves`, every move wherever it is), newest first,
    /// each with its transaction.
    pub(crate) fn changes_touching(
        &self,
        key_id: i64,
        path: &DocPath,
        (after, upto): (i64, i64),
        with_moves: bool,
    ) -> Result<Vec<(StoredChange, TxInfo)>> {
        // Each branch of the union is one seek on the (key, path) index: the ancestors and
        // the path itself, then its descendants (`/…` and `[…` children). The sequence
        // bounds are kept off the index (`+c.seq`), and the index is named: otherwise the
        // planner scans the whole key in `seq` order to save sorting the few rows found.
        let columns = format!("SELECT {CHANGE_COLUMNS}, t.id, t.at, t.actor, t.reason, t.kind");
        let select = format!(
            "{columns} FROM change_log c INDEXED BY change_key_path
             JOIN tx t ON t.id = c.tx WHERE c.key_id = ?1"
        );
        let bounds = "AND +c.seq > ?4 AND +c.seq <= ?5";
        // With renames, moves are selected whatever their path: one may have moved the
        // value away.
        let moves = if with_moves {
            format!(
                "UNION ALL {columns} FROM change_log c JOIN tx t ON t.id = c.tx
                 WHERE c.key_id = ?1 AND c.op = 'move' AND NOT {PATH_MATCH} {bounds}"
            )
        } else {
            String::new()
        };
        let sql = format!(
            "{select} AND c.path IN (SELECT value FROM json_each(?6)) {bounds}
             UNION ALL {select} AND c.path > ?3 || '/' AND c.path < ?3 || '0' {bounds}
             UNION ALL {select} AND c.path > ?3 || '[' AND c.path < ?3 || '\\' {bounds}
             {moves}
             ORDER BY 2 DESC"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let (ancestors, text) = path_args(path);
        // The ancestors and the path itself, as one list (an `OR` would cost the index).
        let mut exact: Vec<String> = path.ancestors().iter().map(ToString::to_string).collect();
        exact.push(text.clone());
        let exact = exact.iter().collect::<crate::canon::Value>().to_string();
        let mut rows = stmt.query(params![key_id, ancestors, text, after, upto, exact])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push((change_at(r, 0)?, tx_at_column(r, 9)?));
        }
        Ok(out)
    }

    /// The changes of key `key_id` with `after < seq <= upto`, newest first, without their
    /// values.
    pub(crate) fn change_heads(
        &self,
        key_id: i64,
        after: i64,
        upto: i64,
    ) -> Result<Vec<ChangeHead>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, seq, tx, path, op, CASE WHEN op = 'move' THEN old END FROM change_log
             WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq DESC",
        )?;
        let mut rows = stmt.query(params![key_id, after, upto])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(head_at(r)?);
        }
        Ok(out)
    }

    /// The change of key `key_id` at version `seq`, without its values.
    pub(crate) fn change_head(&self, key_id: i64, seq: i64) -> Result<ChangeHead> {
        let head = self
            .conn
            .prepare_cached(
                "SELECT id, seq, tx, path, op, CASE WHEN op = 'move' THEN old END
                 FROM change_log WHERE key_id = ?1 AND seq = ?2",
            )?
            .query([key_id, seq])?
            .next()?
            .map(head_at)
            .transpose()?;
        head.ok_or_else(|| corrupt(format!("change {seq} of key {key_id} is missing")))
    }

    /// The newest version up to `top` of key `key_id` whose change is exactly at `path`
    /// (text).
    pub(crate) fn newest_seq_at(&self, key_id: i64, path: &str, top: i64) -> Result<Option<i64>> {
        Ok(self.conn.cached_row(
            "SELECT max(seq) FROM change_log WHERE key_id = ?1 AND path = ?2 AND seq <= ?3",
            params![key_id, path, top],
            |r| r.get(0),
        )?)
    }

    /// The newest version up to `top` of key `key_id` whose change is below `path` (text).
    pub(crate) fn newest_seq_below(
        &self,
        key_id: i64,
        path: &str,
        top: i64,
    ) -> Result<Option<i64>> {
        Ok(self.conn.cached_row(
            // Two ranges of the (key, path, seq) index (`+seq`: not the (key, seq) index,
            // which would read every row of the key).
            "SELECT max(s) FROM (
                SELECT max(seq) AS s FROM change_log WHERE key_id = ?1
                    AND path > ?2 || '/' AND path < ?2 || '0' AND +seq <= ?3
                UNION ALL
                SELECT max(seq) FROM change_log WHERE key_id = ?1
                    AND path > ?2 || '[' AND path < ?2 || '\\' AND +seq <= ?3)",
            params![key_id, path, top],
            |r| r.get(0),
        )?)
    }

    /// The moves recorded in key `key_id`'s log, newest first (`new` not loaded: absent).
    pub(crate) fn moves(&self, key_id: i64) -> Result<Vec<StoredChange>> {
        let mut stmt = self.conn.prepare_cached(
            // Driven by the (few) rename transactions, each looked up in `version`: never
            // a scan of the key's log, however long.
            "SELECT c.id, c.seq, c.tx, c.path, c.op, c.old, NULL, c.old_obj, NULL
             FROM (SELECT DISTINCT tx FROM rename) r
             CROSS JOIN version v ON v.key_id = ?1 AND v.tx = r.tx
             CROSS JOIN change_log c
                 ON c.key_id = v.key_id AND c.seq BETWEEN v.first_seq AND v.last_seq
             WHERE c.op = 'move'
             ORDER BY c.seq DESC",
        )?;
        let mut rows = stmt.query([key_id])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(change_at(r, 0)?);
        }
        Ok(out)
    }

    /// The changes of transaction `tx`, in the order they were recorded, with their keys.
    pub(crate) fn tx_changes(&self, tx: i64) -> Result<Vec<(String, StoredChange)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT k.key, c.id, c.seq, c.tx, c.path, c.op, c.old, c.new, c.old_obj, c.new_obj
             FROM version v JOIN change_key k ON k.id = v.key_id
             JOIN change_log c ON c.key_id = v.key_id AND c.seq BETWEEN v.first_seq AND v.last_seq
             WHERE v.tx = ?1 ORDER BY c.id",
        )?;
        let mut rows = stmt.query([tx])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push((r.get(0)?, change_at(r, 1)?));
        }
        Ok(out)
    }

    /// Calls `each` with every change of a transaction at or after `since` (every change
    /// when `None`), in the order they were recorded, with its transaction and key,
    /// streaming: a log of any length is read in constant memory. `each` stops the walk by
    /// returning [`ControlFlow::Break`].
    pub(crate) fn each_change<E: From<Error>>(
        &self,
        since: Option<When>,
        mut each: impl FnMut(TxInfo, String, StoredChange) -> Result<ControlFlow<()>, E>,
    ) -> Result<(), E> {
        let (cond, since): (&str, Box<dyn rusqlite::ToSql>) = match since {
            None => ("1 = 1 OR ?1 IS NULL", Box::new(0)),
            Some(When::Tx(id)) => ("t.id >= ?1", Box::new(id)),
            Some(When::At(ts)) => ("t.at >= ?1", Box::new(ts.to_string())),
        };
        let sql = format!(
            "SELECT {CHANGE_COLUMNS}, t.id, t.at, t.actor, t.reason, t.kind, k.key
             FROM change_log c JOIN change_key k ON k.id = c.key_id JOIN tx t ON t.id = c.tx
             WHERE {cond} ORDER BY c.id"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(Error::from)?;
        let mut rows = stmt.query([since]).map_err(Error::from)?;
        while let Some(r) = rows.next().map_err(Error::from)? {
            let change = change_at(r, 0)?;
            let tx = tx_at_column(r, 9).map_err(Error::from)?;
            let key: String = r.get(14).map_err(Error::from)?;
            if each(tx, key, change)?.is_break() {
                break;
            }
        }
        Ok(())
    }
}

/// SQL that selects changes at, above or below a path: `?2` ancestors as a JSON array,
/// `?3` the path itself.
pub(super) const PATH_MATCH: &str = "(c.path IN (SELECT value FROM json_each(?2)) OR c.path = ?3
    OR (c.path > ?3 || '/' AND c.path < ?3 || '0')
    OR (c.path > ?3 || '[' AND c.path < ?3 || '\\'))";

/// The arguments of [`PATH_MATCH`]: the ancestors of `path` as a JSON array, and its text.
pub(super) fn path_args(path: &DocPath) -> (String, String) {
    let ancestors: Vec<String> = path.ancestors().iter().map(ToString::to_string).collect();
    (
        ancestors
            .iter()
            .collect::<crate::canon::Value>()
            .to_string(),
        path.to_string(),
    )
}

impl Store {
    /// A stored change with its path parsed and its values loaded.
    pub(crate) fn load_change(&self, c: StoredChange) -> Result<crate::model::Change> {
        Ok(crate::model::Change {
            path: c.doc_path()?,
            op: c.op,
            old: self.value(c.old)?,
            new: self.value(c.new)?,
        })
    }
}
