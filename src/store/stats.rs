//! Statistics of a key's changes over a range of versions, both tiers: how many changes
//! each path had and each transaction made, read without loading a value; and the changes
//! at a chosen set of paths, for the few paths a caller looks at closely.
//!
//! Segments whose path set holds none of the paths asked about are not decompressed.

use super::changes::StoredChange;
use super::{Store, corrupt};
use crate::error::Result;
use crate::path::DocPath;
use rusqlite::params;
use std::collections::BTreeMap;

/// How many changes one path had, and in which transactions the first and last were.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PathTally {
    pub(crate) changes: u64,
    pub(crate) first_tx: i64,
    pub(crate) last_tx: i64,
}

impl PathTally {
    fn add(&mut self, tx: i64, n: u64) {
        self.changes += n;
        self.first_tx = self.first_tx.min(tx);
        self.last_tx = self.last_tx.max(tx);
    }
}

/// The counts of [`Store::change_counts`].
#[derive(Clone, Debug, Default)]
pub(crate) struct ChangeCounts {
    /// By path number.
    pub(crate) paths: rustc_hash::FxHashMap<i64, PathTally>,
    /// By transaction: how many of the counted changes it made.
    pub(crate) txs: BTreeMap<i64, u64>,
}

impl ChangeCounts {
    fn add(&mut self, tx: i64, path_id: i64, n: u64) {
        self.paths
            .entry(path_id)
            .or_insert(PathTally {
                changes: 0,
                first_tx: tx,
                last_tx: tx,
            })
            .add(tx, n);
        *self.txs.entry(tx).or_default() += n;
    }
}

/// True when `wanted` (sorted) is `None` (every path) or holds `id`.
fn wanted_has(wanted: Option<&[u64]>, id: u64) -> bool {
    wanted.is_none_or(|w| w.binary_search(&id).is_ok())
}

impl Store {
    /// The numbers of `path` and of every path below it, sorted (`None` for the root:
    /// every path).
    pub(crate) fn subtree_path_ids(&self, path: &DocPath) -> Result<Option<Vec<u64>>> {
        if path.is_root() {
            return Ok(None);
        }
        let text = path.to_string();
        let mut ids = self.path_ids_below(&text)?;
        ids.extend(self.path_id(&text)?);
        Ok(Some(super::segments::sorted_ids(ids)))
    }

    /// How many changes of key `key_id` with `after < seq <= upto` each path had and each
    /// transaction made, counting only the paths in `wanted` (sorted; `None`: every path).
    /// No value is read.
    pub(crate) fn change_counts(
        &self,
        key_id: i64,
        (after, upto): (i64, i64),
        wanted: Option<&[u64]>,
    ) -> Result<ChangeCounts> {
        let mut counts = ChangeCounts::default();
        if wanted.is_some_and(<[u64]>::is_empty) {
            return Ok(counts);
        }
        for seg in self.segments_between(key_id, after, upto)? {
            if let Some(w) = wanted
                && !seg.touches(w)?
            {
                continue;
            }
            let decoded = self.decoded_range(&seg, after, upto)?;
            for row in decoded.rows_where(after, upto, |path, _| wanted_has(wanted, path)) {
                let path = i64::try_from(row.path).map_err(|_| corrupt("a path number"))?;
                counts.add(row.tx, path, 1);
            }
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT tx, path_id, count(*) FROM change_log
             WHERE key_id = ?1 AND seq > ?2 AND seq <= ?3 GROUP BY tx, path_id",
        )?;
        let mut rows = stmt.query(params![key_id, after, upto])?;
        while let Some(r) = rows.next()? {
            let (tx, path, n): (i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
            let id = u64::try_from(path).map_err(|_| corrupt("a negative path number"))?;
            if wanted_has(wanted, id) {
                counts.add(tx, path, u64::try_from(n).unwrap_or(0));
            }
        }
        Ok(counts)
    }

    /// The changes of key `key_id` with `after < seq <= upto` at one of the paths `ids`
    /// (sorted), oldest first, values not loaded. Segments that touch none of them are not
    /// read.
    pub(crate) fn changes_at(
        &self,
        key_id: i64,
        (after, upto): (i64, i64),
        ids: &[u64],
    ) -> Result<Vec<StoredChange>> {
        let mut out = Vec::new();
        if ids.is_empty() {
            return Ok(out);
        }
        for seg in self.segments_between(key_id, after, upto)? {
            if !seg.touches(ids)? {
                continue;
            }
            let decoded = self.decoded_range(&seg, after, upto)?;
            for row in decoded.rows_where(after, upto, |path, _| ids.binary_search(&path).is_ok()) {
                out.push(self.sealed_change(&row)?);
            }
        }
        let list: crate::canon::Value = ids
            .iter()
            .map(|&id| crate::canon::Value::from(id))
            .collect();
        let mut stmt = self.conn.prepare_cached(TAIL_AT_PATHS)?;
        let mut rows = stmt.query(params![key_id, after, upto, list.to_string()])?;
        while let Some(r) = rows.next()? {
            out.push(super::changes::tail_change(r, 0)?);
        }
        Ok(out)
    }
}

/// The tail's changes of a key at the paths numbered in ?4 (a JSON array) in versions
/// `?2 < seq <= ?3`, oldest first. The index is named for the reason given at
/// `touching_tail_sql`.
pub(super) const TAIL_AT_PATHS: &str =
    "SELECT c.id, c.seq, c.tx, c.path_id, p.path, c.op, c.old, c.new, c.old_obj, c.new_obj
     FROM change_log c INDEXED BY change_key_path JOIN path p ON p.id = c.path_id
     WHERE c.key_id = ?1 AND c.path_id IN (SELECT value FROM json_each(?4))
         AND +c.seq > ?2 AND +c.seq <= ?3
     ORDER BY c.seq";
