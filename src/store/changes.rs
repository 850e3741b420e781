//! Reading the change log, both tiers: a key's changes by version (`seq`), by path, its
//! moves, a transaction's changes, and the whole log in order.
//!
//! A key's changes are numbered 1, 2, 3… (`seq`, dense: `gc` renumbers what it rewrites),
//! so a range of versions `after < seq <= upto` is how every read asks for them. The
//! versions up to `doc.sealed_seq` are in segments (`segments.rs`), the rest are rows of
//! `change_log` (the tail); every read here merges the two, so no caller knows which tier
//! a change is in.

use super::segments::SegmentRow;
use super::{Cached, Store, Stored, corrupt};
use crate::error::{Error, Result};
use crate::model::{Op, TxInfo};
use crate::path::DocPath;
use crate::time::When;
use rusqlite::params;
use std::ops::ControlFlow;
use std::sync::Arc;

/// One change as stored, its values not loaded.
#[derive(Clone, Debug)]
pub(crate) struct StoredChange {
    /// The change's id: the order changes were recorded in, across keys.
    pub(crate) id: i64,
    /// The key's version after this change.
    pub(crate) seq: i64,
    /// The transaction.
    pub(crate) tx: i64,
    /// The number of its path.
    pub(crate) path_id: i64,
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

impl ChangeHead {
    /// The head of a stored change.
    fn of(c: StoredChange) -> Self {
        ChangeHead {
            id: c.id,
            seq: c.seq,
            tx: c.tx,
            op: c.op,
            moved_from: match (c.op, c.old) {
                (Op::Move, Stored::Text(t)) => Some(t),
                _ => None,
            },
            path: c.path,
        }
    }
}

/// One side of a change, for replaying it: its value is `new` going forward, `old` going
/// backward ([`SideChanges::value`]).
pub(crate) struct SideChange {
    /// The number of its path ([`Store::path_text`] has its text).
    pub(crate) path_id: i64,
    pub(crate) op: Op,
    value: SideValue,
}

/// Where a [`SideChange`]'s value is: a replay of thousands of changes keeps only the last
/// at each path, and lays out only those values.
#[derive(Clone, Copy)]
enum SideValue {
    /// Value `n` of the tail rows read ([`SideChanges`]).
    Tail(u32),
    /// Row `row` of the decoded segment `segment` of [`SideChanges`].
    Sealed { segment: u32, row: u32 },
}

/// One side of a range of changes, in the order a replay reads them.
pub(crate) struct SideChanges {
    side: Side,
    segments: Vec<Arc<hist_segment::Segment>>,
    tail: Vec<Stored>,
    pub(crate) changes: Vec<SideChange>,
}

impl SideChanges {
    /// Which value of each change it holds.
    pub(crate) fn side(&self) -> Side {
        self.side
    }

    /// The value of `change` (one of [`SideChanges::changes`]) when it is inline text.
    pub(crate) fn inline(&self, change: &SideChange) -> Option<&str> {
        match change.value {
            SideValue::Tail(n) => match self.tail.get(n as usize)? {
                Stored::Text(text) => Some(text),
                _ => None,
            },
            SideValue::Sealed { segment, row } => {
                let row = self.segments.get(segment as usize)?.row(row as usize)?;
                match self.side {
                    Side::New => row.new,
                    Side::Old => row.old,
                }
            }
        }
    }

    /// The value of `change` (one of [`SideChanges::changes`]), as stored.
    pub(crate) fn value(&self, change: &SideChange) -> Stored {
        match change.value {
            SideValue::Tail(n) => self.tail.get(n as usize).cloned().unwrap_or(Stored::Absent),
            SideValue::Sealed { .. } => self
                .inline(change)
                .map_or(Stored::Absent, |t| Stored::Text(t.to_owned())),
        }
    }
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

/// The op of a sealed change.
pub(super) fn sealed_op(op: hist_segment::Op) -> Op {
    match op {
        hist_segment::Op::Add => Op::Add,
        hist_segment::Op::Remove => Op::Remove,
        hist_segment::Op::Replace => Op::Replace,
        hist_segment::Op::Move => Op::Move,
    }
}

/// A tail row from `id, seq, tx, path_id, path, op, old, new, old_obj, new_obj` at `base`.
pub(super) fn tail_change(r: &rusqlite::Row<'_>, base: usize) -> Result<StoredChange> {
    Ok(StoredChange {
        id: r.get(base)?,
        seq: r.get(base + 1)?,
        tx: r.get(base + 2)?,
        path_id: r.get(base + 3)?,
        path: r.get(base + 4)?,
        op: stored_op(&r.get::<_, String>(base + 5)?)?,
        old: Stored::from_columns(r.get(base + 6)?, r.get(base + 8)?)?,
        new: Stored::from_columns(r.get(base + 7)?, r.get(base + 9)?)?,
    })
}

const TAIL_COLUMNS: &str =
    "c.id, c.seq, c.tx, c.path_id, p.path, c.op, c.old, c.new, c.old_obj, c.new_obj";

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

    /// A sealed change as a stored one.
    pub(super) fn sealed_change(&self, row: &hist_segment::Row<'_>) -> Result<StoredChange> {
        let path_id = i64::try_from(row.path).map_err(|_| corrupt("a path number is too large"))?;
        let text = |v: Option<&str>| v.map_or(Stored::Absent, |t| Stored::Text(t.to_owned()));
        Ok(StoredChange {
            id: row.id,
            seq: row.seq,
            tx: row.tx,
            path_id,
            path: self.path_text(path_id)?.to_string(),
            op: sealed_op(row.op),
            old: text(row.old),
            new: text(row.new),
        })
    }

    /// The tail rows of key `key_id` with `after < seq <= upto`, oldest first.
    fn tail(&self, key_id: i64, after: i64, upto: i64) -> Result<Vec<StoredChange>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {TAIL_COLUMNS} FROM change_log c JOIN path p ON p.id = c.path_id
             WHERE c.key_id = ?1 AND c.seq > ?2 AND c.seq <= ?3 ORDER BY c.seq"
        ))?;
        let mut rows = stmt.query(params![key_id, after, upto])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(tail_change(r, 0)?);
        }
        Ok(out)
    }

    /// The changes of key `key_id` with `after < seq <= upto`.
    pub(crate) fn changes(
        &self,
        key_id: i64,
        after: i64,
        upto: i64,
        order: Order,
    ) -> Result<Vec<StoredChange>> {
        let mut out = Vec::new();
        for seg in self.segments_between(key_id, after, upto)? {
            let decoded = self.decoded(&seg)?;
            for row in decoded.rows_between(after, upto) {
                out.push(self.sealed_change(&row)?);
            }
        }
        out.extend(self.tail(key_id, after, upto)?);
        if order == Order::NewestFirst {
            out.reverse();
        }
        Ok(out)
    }

    /// One side of the changes of key `key_id` with `after < seq <= upto`, for a replay:
    /// `new` oldest first, or `old` newest first. `sealed_seq` is the key's last sealed
    /// version, read in the same snapshot: only the tier that holds the range is asked.
    /// Their paths are numbers: [`Store::load_path_texts`] loads the texts.
    pub(crate) fn side_changes(
        &self,
        key_id: i64,
        sealed_seq: i64,
        after: i64,
        upto: i64,
        side: Side,
    ) -> Result<SideChanges> {
        let mut out = SideChanges {
            side,
            segments: Vec::new(),
            tail: Vec::new(),
            changes: Vec::new(),
        };
        let number = |n: usize| u32::try_from(n).map_err(|_| corrupt("too many changes in a read"));
        let segments = match after < sealed_seq {
            true => self.segments_between(key_id, after, upto)?,
            false => Vec::new(),
        };
        for seg in segments {
            let decoded = self.decoded_range(&seg, after, upto)?;
            let segment = number(out.segments.len())?;
            let rows = decoded.indices_between(after, upto);
            out.changes.reserve(rows.len());
            for row in rows {
                let Some(change) = decoded.row(row) else {
                    break;
                };
                out.changes.push(SideChange {
                    path_id: i64::try_from(change.path).map_err(|_| corrupt("a path number"))?,
                    op: sealed_op(change.op),
                    value: SideValue::Sealed {
                        segment,
                        row: number(row)?,
                    },
                });
            }
            out.segments.push(decoded);
        }
        if upto > sealed_seq {
            let sql = match side {
                Side::Old => {
                    "SELECT path_id, op, old, old_obj FROM change_log
                     WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq"
                }
                Side::New => {
                    "SELECT path_id, op, new, new_obj FROM change_log
                     WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq"
                }
            };
            let mut stmt = self.conn.prepare_cached(sql)?;
            let mut rows = stmt.query(params![key_id, after.max(sealed_seq), upto])?;
            while let Some(row) = rows.next()? {
                let path_id = row.get(0)?;
                out.changes.push(SideChange {
                    path_id,
                    op: stored_op(
                        row.get_ref(1)?
                            .as_str()
                            .map_err(|e| corrupt(format!("a stored change: {e}")))?,
                    )?,
                    value: SideValue::Tail(number(out.tail.len())?),
                });
                out.tail
                    .push(Stored::from_columns(row.get(2)?, row.get(3)?)?);
            }
        }
        if side == Side::Old {
            out.changes.reverse();
        }
        Ok(out)
    }

    /// The changes of key `key_id` with `after < seq <= upto` at `path`, at one of its
    /// ancestors or below it (and, `with_moves`, every move wherever it is), newest first,
    /// each with its transaction. Segments that touch none of those paths are not read.
    pub(crate) fn changes_touching(
        &self,
        key_id: i64,
        path: &DocPath,
        (after, upto): (i64, i64),
        with_moves: bool,
    ) -> Result<Vec<(StoredChange, TxInfo)>> {
        let wanted = self.path_ids_touching(path)?;
        let mut out = Vec::new();
        for seg in self.segments_between(key_id, after, upto)? {
            let moves = with_moves && seg.moves > 0;
            if !moves && !seg.touches(&wanted)? {
                continue;
            }
            // With moves, every block; else only the blocks that touch the paths.
            let blocks = match moves {
                true => vec![self.decoded(&seg)?],
                false => self.segment_blocks_touching(&seg, &wanted, after, upto)?,
            };
            let hit = |path: u64, op| {
                wanted.binary_search(&path).is_ok() || (with_moves && op == hist_segment::Op::Move)
            };
            for block in &blocks {
                for row in block.rows_where(after, upto, hit) {
                    out.push(self.sealed_change(&row)?);
                }
            }
        }
        let sql = touching_tail_sql(with_moves);
        let mut exact = path.ancestors();
        exact.push(path.clone());
        let exact = self.path_ids_of(&exact)?;
        let exact = exact
            .iter()
            .map(|&id| crate::canon::Value::from(id))
            .collect::<crate::canon::Value>()
            .to_string();
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(params![key_id, after, upto, exact, path.to_string()])?;
        while let Some(r) = rows.next()? {
            out.push(tail_change(r, 0)?);
        }
        // Newest first, each with its transaction.
        out.reverse();
        let mut txs = TxCache::default();
        out.into_iter()
            .map(|c| Ok((txs.get(self, c.tx)?, c)))
            .map(|r: Result<_>| r.map(|(tx, c)| (c, tx)))
            .collect()
    }

    /// The changes of key `key_id` with `after < seq <= upto`, newest first, without their
    /// values.
    pub(crate) fn change_heads(
        &self,
        key_id: i64,
        after: i64,
        upto: i64,
    ) -> Result<Vec<ChangeHead>> {
        let mut out: Vec<ChangeHead> = self
            .changes(key_id, after, upto, Order::NewestFirst)?
            .into_iter()
            .map(ChangeHead::of)
            .collect();
        out.shrink_to_fit();
        Ok(out)
    }

    /// The change of key `key_id` at version `seq`, without its values. A sealed one is
    /// read from the blocks holding it, not from its whole segment (blame asks for the
    /// first change of a long history this way).
    pub(crate) fn change_head(&self, key_id: i64, seq: i64) -> Result<ChangeHead> {
        let mut found = Vec::new();
        for seg in self.segments_between(key_id, seq - 1, seq)? {
            let decoded = self.decoded_range(&seg, seq - 1, seq)?;
            for row in decoded.rows_between(seq - 1, seq) {
                found.push(self.sealed_change(&row)?);
            }
        }
        found.extend(self.tail(key_id, seq - 1, seq)?);
        found
            .pop()
            .map(ChangeHead::of)
            .ok_or_else(|| corrupt(format!("change {seq} of key {key_id} is missing")))
    }

    /// The newest version up to `top` of key `key_id` whose change is exactly at `path`
    /// (text).
    pub(crate) fn newest_seq_at(&self, key_id: i64, path: &str, top: i64) -> Result<Option<i64>> {
        let Some(id) = self.path_id(path)? else {
            return Ok(None);
        };
        self.newest_seq_among(key_id, &[id], top, |sql_ids| {
            self.conn.cached_row(
                "SELECT max(seq) FROM change_log WHERE key_id = ?1 AND path_id = ?2 AND seq <= ?3",
                params![key_id, sql_ids[0], top],
                |r| r.get(0),
            )
        })
    }

    /// The newest version up to `top` of key `key_id` whose change is below `path` (text).
    pub(crate) fn newest_seq_below(
        &self,
        key_id: i64,
        path: &str,
        top: i64,
    ) -> Result<Option<i64>> {
        let below = self.path_ids_below(path)?;
        if below.is_empty() {
            return Ok(None);
        }
        self.newest_seq_among(key_id, &below, top, |_| {
            self.conn.cached_row(
                // The descendants' numbers, each a seek on the (key, path, seq) index
                // (`+seq`: not the (key, seq) index, which would read every row of the key).
                "SELECT max(seq) FROM change_log WHERE key_id = ?1 AND +seq <= ?3
                 AND path_id IN (
                     SELECT id FROM path WHERE path > ?2 || '/' AND path < ?2 || '0'
                     UNION ALL SELECT id FROM path WHERE path > ?2 || '[' AND path < ?2 || '\\')",
                params![key_id, path, top],
                |r| r.get(0),
            )
        })
    }

    /// The newest version up to `top` of key `key_id` at one of the paths `ids`: the tail's
    /// answer (`in_tail`), or else that of the newest segment that touches one of them.
    fn newest_seq_among(
        &self,
        key_id: i64,
        ids: &[i64],
        top: i64,
        in_tail: impl FnOnce(&[i64]) -> rusqlite::Result<Option<i64>>,
    ) -> Result<Option<i64>> {
        if let Some(seq) = in_tail(ids)? {
            return Ok(Some(seq));
        }
        let mut wanted: Vec<u64> = ids.iter().filter_map(|&i| u64::try_from(i).ok()).collect();
        wanted.sort_unstable();
        for seg in self.segments_between(key_id, 0, top)?.iter().rev() {
            if !seg.touches(&wanted)? {
                continue;
            }
            // The blocks that touch the paths, the newest first.
            let blocks = self.segment_blocks_touching(seg, &wanted, i64::MIN, top)?;
            let found = blocks.iter().rev().find_map(|block| {
                block
                    .rows_where(i64::MIN, top, |path, _| wanted.binary_search(&path).is_ok())
                    .next_back()
            });
            if let Some(row) = found {
                return Ok(Some(row.seq));
            }
        }
        Ok(None)
    }

    /// The moves recorded in key `key_id`'s log, newest first (`new` not loaded: absent).
    pub(crate) fn moves(&self, key_id: i64) -> Result<Vec<StoredChange>> {
        // Driven by the (few) rename transactions, each looked up in `version`: never a
        // scan of the key's log, however long.
        let ranges: Vec<(i64, i64)> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT v.first_seq, v.last_seq FROM (SELECT DISTINCT tx FROM rename) r
                 CROSS JOIN version v ON v.key_id = ?1 AND v.tx = r.tx ORDER BY v.first_seq",
            )?;
            stmt.query_map([key_id], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut out = Vec::new();
        for (first, last) in ranges {
            for mut c in self.changes(key_id, first - 1, last, Order::OldestFirst)? {
                if c.op == Op::Move {
                    c.new = Stored::Absent;
                    out.push(c);
                }
            }
        }
        out.reverse();
        Ok(out)
    }

    /// The changes of transaction `tx`, in the order they were recorded, with their keys.
    pub(crate) fn tx_changes(&self, tx: i64) -> Result<Vec<(String, StoredChange)>> {
        let versions: Vec<(String, i64, i64, i64)> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT k.key, v.key_id, v.first_seq, v.last_seq
                 FROM version v JOIN change_key k ON k.id = v.key_id WHERE v.tx = ?1",
            )?;
            stmt.query_map([tx], |r| r.try_into())?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut out = Vec::new();
        for (key, key_id, first, last) in versions {
            for c in self.changes(key_id, first - 1, last, Order::OldestFirst)? {
                out.push((key.clone(), c));
            }
        }
        out.sort_by_key(|(_, c)| c.id);
        Ok(out)
    }

    /// Calls `each` with every change of a transaction at or after `since` (every change
    /// when `None`), in the order they were recorded, with its transaction and key, a
    /// transaction at a time: a log of any length is read in the memory of its largest
    /// transaction. `each` stops the walk by returning [`ControlFlow::Break`].
    pub(crate) fn each_change<E: From<Error>>(
        &self,
        since: Option<When>,
        mut each: impl FnMut(TxInfo, String, StoredChange) -> Result<ControlFlow<()>, E>,
    ) -> Result<(), E> {
        let first = match since {
            None => 0,
            Some(When::Tx(id)) => id,
            Some(When::At(ts)) => self
                .conn
                .cached_row(
                    "SELECT coalesce(min(id), -1) FROM tx WHERE at >= ?1",
                    [ts.to_string()],
                    |r| r.get::<_, i64>(0),
                )
                .map_err(Error::from)?,
        };
        if first < 0 {
            return Ok(());
        }
        let mut next = first;
        loop {
            // Transactions that changed something, a page at a time.
            let txs: Vec<i64> = {
                let mut stmt = self
                    .conn
                    .prepare_cached(
                        "SELECT DISTINCT tx FROM version WHERE tx >= ?1 ORDER BY tx LIMIT 256",
                    )
                    .map_err(Error::from)?;
                stmt.query_map([next], |r| r.get(0))
                    .map_err(Error::from)?
                    .collect::<rusqlite::Result<_>>()
                    .map_err(Error::from)?
            };
            let Some(&last) = txs.last() else {
                return Ok(());
            };
            for tx in txs {
                let info = self
                    .tx(tx)?
                    .ok_or_else(|| corrupt(format!("changes name a missing transaction {tx}")))?;
                for (key, change) in self.tx_changes(tx)? {
                    if each(info.clone(), key, change)?.is_break() {
                        return Ok(());
                    }
                }
            }
            next = last + 1;
        }
    }

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

/// The tail's changes of a key at some paths, for [`Store::changes_touching`]: ?1 the key,
/// ?2 and ?3 the range of versions, ?4 the numbers of a path and its ancestors (a JSON
/// array), ?5 the path, whose descendants are found by their text.
///
/// Each branch of the union is one seek on the (key, path) index, the ancestors and the
/// path itself, then its descendants; with `with_moves`, every move whatever its path.
/// The index is named: the planner, not knowing how many numbers `json_each` yields, chose
/// the (key, seq) index for the order and read every change of the key.
fn touching_tail_sql(with_moves: bool) -> String {
    let moves = if with_moves {
        format!(
            "UNION SELECT {TAIL_COLUMNS} FROM change_log c JOIN path p ON p.id = c.path_id
             WHERE c.key_id = ?1 AND c.op = 'move' AND +c.seq > ?2 AND +c.seq <= ?3"
        )
    } else {
        String::new()
    };
    format!(
        "SELECT {TAIL_COLUMNS} FROM change_log c INDEXED BY change_key_path
             JOIN path p ON p.id = c.path_id
         WHERE c.key_id = ?1 AND c.path_id IN (SELECT value FROM json_each(?4))
             AND +c.seq > ?2 AND +c.seq <= ?3
         UNION SELECT {TAIL_COLUMNS} FROM change_log c INDEXED BY change_key_path
             JOIN path p ON p.id = c.path_id
         WHERE c.key_id = ?1 AND c.path_id IN (
                 SELECT id FROM path WHERE path > ?5 || '/' AND path < ?5 || '0'
                 UNION ALL SELECT id FROM path WHERE path > ?5 || '[' AND path < ?5 || '\\')
             AND +c.seq > ?2 AND +c.seq <= ?3
         {moves}
         ORDER BY 2"
    )
}

/// Transactions, each read once.
#[derive(Default)]
pub(super) struct TxCache(std::collections::HashMap<i64, TxInfo>);

impl TxCache {
    pub(super) fn get(&mut self, store: &Store, id: i64) -> Result<TxInfo> {
        if let Some(tx) = self.0.get(&id) {
            return Ok(tx.clone());
        }
        let tx = store
            .tx(id)?
            .ok_or_else(|| corrupt(format!("a change names a missing transaction {id}")))?;
        self.0.insert(id, tx.clone());
        Ok(tx)
    }
}

impl SegmentRow {
    /// True when this segment may hold a change at, above or below one of `wanted`.
    pub(super) fn touches(&self, wanted: &[u64]) -> Result<bool> {
        hist_segment::pathset::intersects(&self.paths, wanted).map_err(corrupt)
    }
}

use rusqlite::OptionalExtension as _;

#[cfg(test)]
mod tests {
    use super::{Store, touching_tail_sql};

    /// The plan SQLite makes for a statement, one line per step.
    fn plan(store: &Store, sql: &str) -> Vec<String> {
        let mut stmt = store
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
        // Parameters left unbound (NULL): the plan does not depend on them.
        let mut rows = stmt.raw_query();
        let mut lines = Vec::new();
        while let Some(row) = rows.next().unwrap() {
            lines.push(row.get(3).unwrap());
        }
        lines
    }

    /// The tail's reads of a few paths seek the (key, path) index: read through the
    /// (key, seq) index, a field's history cost as much as the key had changes.
    #[test]
    fn reads_at_paths_seek_the_key_path_index() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), true).unwrap();
        for sql in [
            touching_tail_sql(false),
            super::super::stats::TAIL_AT_PATHS.into(),
        ] {
            let plan = plan(&store, &sql);
            let reads: Vec<&String> = plan.iter().filter(|l| l.starts_with("SEARCH c ")).collect();
            assert!(!reads.is_empty(), "{plan:?}");
            for read in reads {
                assert!(
                    read.contains("INDEX change_key_path (key_id=? AND path_id=?)"),
                    "{plan:?}"
                );
            }
        }
    }
}
