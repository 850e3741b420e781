//! `gc`: applies retention rules, rebuilds checkpoints, drops unreferenced objects, vacuums.
//!
//! Terminology:
//! - **Covered change**: a change row recorded at or below a place a retention rule's
//!   pattern selects (the rule with the longest pattern wins, see [`crate::retention`]).
//!   A change at an ancestor (a whole item or document written at once) is not covered by
//!   `/items[*]/price` and is never touched. Moves (renames) are never compacted.
//! - **Compacted path** `P`: the covered change's path cut to the pattern's length
//!   (`/items[id=7]/price` for a change at `/items[id=7]/price` or below it).
//! - **Group**: consecutive covered changes of one key and compacted path that are older
//!   than the rule's window and fall in one bucket (a UTC day, an hour, or the whole span
//!   for `drop`), with no change in between that touches `P`'s ancestors or descendants
//!   otherwise (such a change ends the group). A group of two or more changes is replaced
//!   by ONE change at `P` in the place of its last one (same transaction): `old` is the
//!   value at `P` before the first, `new` the value after the last. A group whose net
//!   effect is nothing (5 → 6 → 5) leaves no change.
//!
//! Because the replacement sits where the group's last change was, the document is exact
//! before each group and from the end of each group on: every read at a transaction
//! outside the compacted spans, and every read in the kept window, returns what it
//! returned before gc. Reads inside a span return the compacted values and are flagged
//! ([`crate::AsOf::compacted`], [`crate::HistoryEntry::compacted`]).
//!
//! gc runs as ONE SQLite transaction that also records a transaction of kind `compact`
//! with one `compaction` row per key and path (how many changes it replaced, how many it
//! wrote, and the span). In the same SQLite transaction it renumbers each rewritten key's
//! `seq`, rebuilds the checkpoints that no longer match (keeping those that do), updates
//! the per-document checkpoint counters and recomputes the hash chain from the first
//! transaction whose rows changed. A crash leaves the whole compaction or none of it.
//! Only after the commit are unreferenced objects and orphan temporary files deleted
//! (while holding the write lock, so no writer is between writing an object and
//! committing the row that names it), then the database is vacuumed.

use crate::canon;
use crate::canon::Value;
use crate::diff;
use crate::error::{Error, Result};
use crate::model::{Op, TxInfo};
use crate::path::DocPath;
use crate::repo::{
    CHECKPOINT_EVERY, CHECKPOINT_MIN_BYTES, Repo, TxOptions, change_from_row, encode_value,
};
use crate::retention::{Retention, Then};
use crate::rules::{Rule, RuleKind};
use crate::store::objects::Objects;
use crate::time::Timestamp;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// What a compaction did (or, in a plan, will do) to one compacted path of one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compaction {
    /// The `compact` transaction that recorded it (`None` in a plan).
    pub tx: Option<i64>,
    /// The document.
    pub key: String,
    /// The compacted path.
    pub path: DocPath,
    /// The retention rule applied.
    pub rule: i64,
    /// Daily, hourly or drop.
    pub mode: Then,
    /// How many change rows were replaced.
    pub replaced: usize,
    /// How many change rows were written in their place.
    pub kept: usize,
    /// The first transaction of the span.
    pub first_tx: i64,
    /// The last transaction of the span.
    pub last_tx: i64,
    /// When the span starts.
    pub first_at: Timestamp,
    /// When it ends.
    pub last_at: Timestamp,
}

impl Compaction {
    /// True when a read right after transaction `tx` falls inside this span: its values at
    /// [`Compaction::path`] are the compacted ones.
    pub fn covers_tx(&self, tx: i64) -> bool {
        self.first_tx <= tx && tx < self.last_tx
    }
}

/// What `gc` will do: the compactions, per key and path, and the rewrites behind them.
#[derive(Clone, Debug)]
pub struct GcPlan {
    /// The moment the retention windows are measured back from.
    pub at: Timestamp,
    /// One entry per key and compacted path, in key and path order.
    pub compactions: Vec<Compaction>,
    keys: Vec<KeyPlan>,
}

impl Default for GcPlan {
    fn default() -> Self {
        Self {
            at: Timestamp(0),
            compactions: Vec::new(),
            keys: Vec::new(),
        }
    }
}

impl GcPlan {
    /// True when there is nothing to compact.
    pub fn is_empty(&self) -> bool {
        self.compactions.is_empty()
    }

    /// How many change rows the plan replaces.
    pub fn replaced(&self) -> usize {
        self.compactions.iter().map(|c| c.replaced).sum()
    }

    /// How many change rows it writes in their place.
    pub fn kept(&self) -> usize {
        self.compactions.iter().map(|c| c.kept).sum()
    }
}

/// What `gc` did.
#[derive(Clone, Debug, Default)]
pub struct GcOutcome {
    /// The plan it applied.
    pub plan: GcPlan,
    /// The `compact` transaction (`None` when there was nothing to compact).
    pub tx: Option<TxInfo>,
    /// Checkpoints written anew for rewritten keys.
    pub checkpoints_written: usize,
    /// Checkpoints dropped because they no longer matched the log.
    pub checkpoints_dropped: usize,
    /// Objects deleted because nothing referenced them any more.
    pub objects_removed: usize,
    /// Their size on disk.
    pub object_bytes_freed: u64,
    /// Orphan temporary files deleted (left by interrupted writes).
    pub temp_files_removed: usize,
    /// `hist.db` (with its WAL) before gc, in bytes.
    pub db_bytes_before: u64,
    /// …and after the vacuum.
    pub db_bytes_after: u64,
}

/// The rewrites of one key.
#[derive(Clone, Debug, Default)]
struct KeyPlan {
    key: String,
    /// Change rows to delete.
    deleted: Vec<i64>,
    /// Change rows to rewrite as the replacement of their group.
    merges: Vec<Merge>,
}

#[derive(Clone, Debug)]
struct Merge {
    row: i64,
    path: DocPath,
    old: Option<Value>,
    new: Option<Value>,
}

/// Where a covered change is compacted: its rule and compacted path.
#[derive(Clone, Debug)]
struct Target {
    rule: i64,
    mode: Then,
    cutoff: i64,
    path: DocPath,
    text: String,
}

/// An open group: covered changes of one compacted path, in one bucket, not yet ended.
struct Group {
    target: Target,
    bucket: i64,
    old: Option<Value>,
    rows: Vec<i64>,
    first: (i64, Timestamp),
    last: (i64, Timestamp),
}

/// The retention rules of one key and the compacted path of each changed path.
struct KeyRetention<'a> {
    rules: Vec<(&'a Rule, Retention)>,
    at: i64,
    cache: HashMap<String, Option<Target>>,
}

impl<'a> KeyRetention<'a> {
    fn new(rules: &'a [Rule], key: &str, at: Timestamp) -> Self {
        let rules = rules
            .iter()
            .filter_map(|r| match &r.kind {
                RuleKind::Retention(policy) if r.applies_to_key(key) => Some((r, *policy)),
                _ => None,
            })
            .collect();
        Self {
            rules,
            at: at.0,
            cache: HashMap::new(),
        }
    }

    /// The oldest cutoff that matters: no change at or after it can be compacted.
    fn latest_cutoff(&self) -> Option<i64> {
        self.rules
            .iter()
            .filter_map(|(_, policy)| match policy {
                Retention::Keep { seconds, .. } => {
                    Some(self.at.saturating_sub(seconds.saturating_mul(1_000_000)))
                }
                Retention::Forever => None,
            })
            .max()
    }

    /// The rule covering a change at `path` (longest pattern; the later of equals), when it
    /// compacts.
    fn target(&mut self, path: &DocPath, text: &str) -> Option<Target> {
        if let Some(found) = self.cache.get(text) {
            return found.clone();
        }
        let mut best: Option<&(&Rule, Retention)> = None;
        for entry in &self.rules {
            let longer = best.is_none_or(|(b, _)| {
                entry.0.pattern.segments().len() >= b.pattern.segments().len()
            });
            if longer && entry.0.pattern.covers(path) {
                best = Some(entry);
            }
        }
        let found = match best {
            Some((rule, Retention::Keep { seconds, then })) => {
                let n = rule.pattern.segments().len();
                let cut = DocPath::from_segments(path.segments()[..n].to_vec());
                Some(Target {
                    rule: rule.id,
                    mode: *then,
                    cutoff: self.at.saturating_sub(seconds.saturating_mul(1_000_000)),
                    text: cut.to_string(),
                    path: cut,
                })
            }
            _ => None,
        };
        self.cache.insert(text.to_owned(), found.clone());
        found
    }
}

/// Plans one key: replays its log forward, grouping covered changes (see the module doc).
struct KeyPlanner<'a> {
    key: &'a str,
    open: BTreeMap<String, Group>,
    plan: KeyPlan,
    stats: BTreeMap<String, Compaction>,
}

impl KeyPlanner<'_> {
    /// Ends a group; the document holds the state right after its last change.
    fn close(&mut self, group: Group, doc: Option<&Value>) {
        if group.rows.len() < 2 {
            return;
        }
        let new = doc
            .and_then(|d| diff::get(d, group.target.path.segments()))
            .cloned();
        let (last, rest) = group.rows.split_last().unwrap_or((&0, &[]));
        self.plan.deleted.extend_from_slice(rest);
        let kept = group.old != new;
        if kept {
            self.plan.merges.push(Merge {
                row: *last,
                path: group.target.path.clone(),
                old: group.old,
                new,
            });
        } else {
            self.plan.deleted.push(*last);
        }
        let entry = self
            .stats
            .entry(group.target.text.clone())
            .or_insert_with(|| Compaction {
                tx: None,
                key: self.key.to_owned(),
                path: group.target.path.clone(),
                rule: group.target.rule,
                mode: group.target.mode,
                replaced: 0,
                kept: 0,
                first_tx: group.first.0,
                last_tx: group.last.0,
                first_at: group.first.1,
                last_at: group.last.1,
            });
        entry.replaced += group.rows.len();
        entry.kept += usize::from(kept);
        entry.first_tx = entry.first_tx.min(group.first.0);
        entry.first_at = entry.first_at.min(group.first.1);
        entry.last_tx = entry.last_tx.max(group.last.0);
        entry.last_at = entry.last_at.max(group.last.1);
    }

    /// Ends every open group that a change at `path` touches (at, above or below its
    /// compacted path), except the one it joins (`joins`).
    fn end_touched(&mut self, path: &DocPath, joins: Option<&str>, doc: Option<&Value>) {
        let mut ended = Vec::new();
        let mut prefix = DocPath::root();
        let check = |text: String, ended: &mut Vec<String>| {
            if joins != Some(text.as_str()) && self.open.contains_key(&text) {
                ended.push(text);
            }
        };
        check(String::new(), &mut ended);
        for seg in path.segments() {
            prefix.push(seg.clone());
            check(prefix.to_string(), &mut ended);
        }
        let text = path.to_string();
        for (other, group) in self
            .open
            .range::<String, _>((std::ops::Bound::Excluded(&text), std::ops::Bound::Unbounded))
        {
            if !other.starts_with(&text) {
                break;
            }
            if group.target.path.starts_with(path) && joins != Some(other.as_str()) {
                ended.push(other.clone());
            }
        }
        ended.sort();
        ended.dedup();
        for text in ended {
            if let Some(group) = self.open.remove(&text) {
                self.close(group, doc);
            }
        }
    }
}

type PlanRow = (
    i64,
    i64,
    String,
    String,
    String,
    (Option<String>, Option<String>),
    (Option<String>, Option<String>),
);

/// Plans the compaction of every key under the retention rules, as of `at`.
fn plan(conn: &Connection, objects: &Objects, rules: &[Rule], at: Timestamp) -> Result<GcPlan> {
    let mut out = GcPlan {
        at,
        ..GcPlan::default()
    };
    if !rules
        .iter()
        .any(|r| matches!(r.kind, RuleKind::Retention(Retention::Keep { .. })))
    {
        return Ok(out);
    }
    let keys: Vec<String> = {
        let mut stmt = conn.prepare("SELECT key FROM doc ORDER BY key")?;
        stmt.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    for key in &keys {
        let mut retention = KeyRetention::new(rules, key, at);
        let Some(latest) = retention.latest_cutoff() else {
            continue;
        };
        let oldest: Option<String> = conn
            .query_row(
                "SELECT t.at FROM change_log c JOIN tx t ON t.id = c.tx
                 WHERE c.key_id = (SELECT id FROM change_key WHERE key = ?1) ORDER BY c.seq LIMIT 1",
                [key],
                |r| r.get(0),
            )
            .optional()?;
        if oldest
            .as_deref()
            .and_then(Timestamp::parse_rfc3339)
            .is_none_or(|t| t.0 >= latest)
        {
            continue;
        }
        let mut planner = KeyPlanner {
            key,
            open: BTreeMap::new(),
            plan: KeyPlan {
                key: key.clone(),
                ..KeyPlan::default()
            },
            stats: BTreeMap::new(),
        };
        let mut doc: Option<Value> = None;
        let mut stmt = conn.prepare_cached(
            "SELECT c.id, c.tx, t.at, c.path, c.op, c.old, c.new, c.old_obj, c.new_obj
             FROM change_log c JOIN tx t ON t.id = c.tx WHERE c.key_id = (SELECT id FROM change_key WHERE key = ?1) ORDER BY c.seq",
        )?;
        let mut rows = stmt.query([key])?;
        while let Some(r) = rows.next()? {
            let (id, tx, at_text, path, op, old, new): PlanRow = (
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                (r.get(5)?, r.get(7)?),
                (r.get(6)?, r.get(8)?),
            );
            let when = Timestamp::parse_rfc3339(&at_text)
                .ok_or_else(|| Error::Corrupt(format!("transaction {tx} has time {at_text:?}")))?;
            if when.0 >= latest {
                // Nothing from here on is old enough; the document holds the state after
                // every open group's last change (a change touching one would have ended it).
                break;
            }
            let change = change_from_row(objects, &path, &op, old, new)?;
            if change.op == Op::Move {
                let from = diff::move_source(&change).map_err(|e| replay_error(key, &e))?;
                planner.end_touched(&change.path, None, doc.as_ref());
                planner.end_touched(&from, None, doc.as_ref());
            } else {
                let target = retention
                    .target(&change.path, &path)
                    .filter(|t| when.0 < t.cutoff);
                let joins = target.as_ref().and_then(|t| {
                    let bucket = t.mode.bucket(when.0);
                    planner
                        .open
                        .get(&t.text)
                        .filter(|g| g.bucket == bucket && g.target.rule == t.rule)
                        .map(|_| t.text.as_str())
                });
                planner.end_touched(&change.path, joins, doc.as_ref());
                if let Some(t) = target {
                    let bucket = t.mode.bucket(when.0);
                    match planner.open.get_mut(&t.text) {
                        Some(group) => {
                            group.rows.push(id);
                            group.last = (tx, when);
                        }
                        None => {
                            let old = doc
                                .as_ref()
                                .and_then(|d| diff::get(d, t.path.segments()))
                                .cloned();
                            planner.open.insert(
                                t.text.clone(),
                                Group {
                                    target: t,
                                    bucket,
                                    old,
                                    rows: vec![id],
                                    first: (tx, when),
                                    last: (tx, when),
                                },
                            );
                        }
                    }
                }
            }
            diff::apply(&mut doc, &change).map_err(|e| replay_error(key, &e))?;
        }
        let open = std::mem::take(&mut planner.open);
        for (_, group) in open {
            planner.close(group, doc.as_ref());
        }
        if !planner.plan.deleted.is_empty() || !planner.plan.merges.is_empty() {
            out.compactions.extend(planner.stats.into_values());
            out.keys.push(planner.plan);
        }
    }
    Ok(out)
}

fn replay_error(key: &str, e: &diff::ApplyError) -> Error {
    Error::Corrupt(format!("replaying {key}: {e}"))
}

/// Checkpoint bookkeeping of one rewritten key.
#[derive(Default)]
struct CheckpointStats {
    written: usize,
    dropped: usize,
}

/// Rewrites one key: deletes and rewrites its rows, renumbers `seq`, rebuilds its
/// checkpoints and its `doc` row. Returns the checkpoint counts.
fn rewrite_key(conn: &Connection, objects: &Objects, kp: &KeyPlan) -> Result<CheckpointStats> {
    let key = &kp.key;
    {
        let mut delete = conn.prepare_cached("DELETE FROM change_log WHERE id = ?1")?;
        for id in &kp.deleted {
            delete.execute([id])?;
        }
        let mut update = conn.prepare_cached(
            "UPDATE change_log SET path = ?1, op = ?2, old = ?3, new = ?4, old_obj = ?5,
                 new_obj = ?6 WHERE id = ?7",
        )?;
        for m in &kp.merges {
            let op = Op::between(m.old.as_ref(), m.new.as_ref()).unwrap_or(Op::Replace);
            let old = encode_value(objects, m.old.as_ref())?;
            let new = encode_value(objects, m.new.as_ref())?;
            update.execute(params![
                m.path.to_string(),
                op.as_str(),
                old.text,
                new.text,
                old.obj,
                new.obj,
                m.row
            ])?;
        }
    }
    // Renumber 1, 2, 3…: rows only went away, so in ascending order each new number is
    // free by the time it is written.
    let old_checkpoints: Vec<(i64, Option<String>)> = {
        let mut stmt = conn.prepare_cached("SELECT seq, object FROM checkpoint WHERE key = ?1")?;
        stmt.query_map([key], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let old_at: HashMap<i64, Option<String>> = old_checkpoints.iter().cloned().collect();
    let mut survivors: HashMap<i64, Option<String>> = HashMap::new();
    {
        let rows: Vec<(i64, i64)> = {
            let mut stmt =
                conn.prepare_cached("SELECT id, seq FROM change_log WHERE key_id = (SELECT id FROM change_key WHERE key = ?1) ORDER BY seq")?;
            stmt.query_map([key], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut renumber = conn.prepare_cached("UPDATE change_log SET seq = ?1 WHERE id = ?2")?;
        for (n, (id, seq)) in (1..).zip(rows) {
            if let Some(obj) = old_at.get(&seq) {
                survivors.insert(n, obj.clone());
            }
            if seq != n {
                renumber.execute(params![n, id])?;
            }
        }
    }
    conn.execute("DELETE FROM checkpoint WHERE key = ?1", [key])?;
    conn.execute(
        "DELETE FROM version WHERE key_id = (SELECT id FROM change_key WHERE key = ?1)",
        [key],
    )?;
    conn.execute(
        "INSERT INTO version (key_id, tx, first_seq, last_seq)
         SELECT key_id, tx, min(seq), max(seq) FROM change_log
         WHERE key_id = (SELECT id FROM change_key WHERE key = ?1) GROUP BY tx",
        [key],
    )?;
    let mut rebuild = Rebuild {
        conn,
        objects,
        key,
        survivors,
        count: 0,
        bytes: 0,
        ckpt_seq: 0,
        written: 0,
        kept: 0,
    };
    let mut doc: Option<Value> = None;
    let mut last: Option<(i64, i64)> = None;
    let mut stmt = conn.prepare_cached(
        "SELECT seq, tx, path, op, old, new, old_obj, new_obj FROM change_log
         WHERE key_id = (SELECT id FROM change_key WHERE key = ?1) ORDER BY seq",
    )?;
    let mut rows = stmt.query([key])?;
    while let Some(r) = rows.next()? {
        let (seq, tx): (i64, i64) = (r.get(0)?, r.get(1)?);
        if let Some((pseq, ptx)) = last {
            rebuild.settle(doc.as_ref(), pseq, ptx, ptx != tx)?;
        }
        let (old, new): (Option<String>, Option<String>) = (r.get(4)?, r.get(5)?);
        let change = change_from_row(
            objects,
            &r.get::<_, String>(2)?,
            &r.get::<_, String>(3)?,
            (old.clone(), r.get(6)?),
            (new.clone(), r.get(7)?),
        )?;
        diff::apply(&mut doc, &change).map_err(|e| replay_error(key, &e))?;
        rebuild.count += 1;
        rebuild.bytes += value_len(old.as_deref(), change.old.as_ref())
            + value_len(new.as_deref(), change.new.as_ref());
        last = Some((seq, tx));
    }
    drop(rows);
    if let Some((seq, tx)) = last {
        rebuild.settle(doc.as_ref(), seq, tx, true)?;
    }
    let stats = CheckpointStats {
        written: rebuild.written,
        dropped: old_checkpoints.len().saturating_sub(rebuild.kept),
    };
    let (current, hash): (Option<String>, Option<Vec<u8>>) =
        conn.query_row("SELECT doc, hash FROM doc WHERE key = ?1", [key], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    let replayed = doc.as_ref().map(|d| canon::hash(d).0.to_vec());
    if replayed != hash || current.is_some() != doc.is_some() {
        return Err(Error::Corrupt(format!(
            "{key}: the compacted log does not replay to the current document; gc changed nothing"
        )));
    }
    match last {
        Some((seq, tx)) => {
            conn.execute(
                "UPDATE doc SET seq = ?2, tx = ?3, ckpt_seq = ?4, ckpt_count = ?5,
                     ckpt_bytes = ?6 WHERE key = ?1",
                params![key, seq, tx, rebuild.ckpt_seq, rebuild.count, rebuild.bytes],
            )?;
        }
        None => {
            conn.execute("DELETE FROM doc WHERE key = ?1", [key])?;
        }
    }
    Ok(stats)
}

/// Rebuilds one key's checkpoints while its rewritten log is replayed: an old checkpoint
/// is kept where its version survived and still matches; elsewhere a new one is written by
/// the same policy as a commit's (every [`CHECKPOINT_EVERY`] changes, or when the changes
/// since the last one outweigh the document).
struct Rebuild<'a> {
    conn: &'a Connection,
    objects: &'a Objects,
    key: &'a str,
    /// Old checkpoints by their new version number.
    survivors: HashMap<i64, Option<String>>,
    count: i64,
    bytes: i64,
    ckpt_seq: i64,
    written: usize,
    kept: usize,
}

impl Rebuild<'_> {
    /// Decides about a checkpoint right after version `seq` (of transaction `tx`;
    /// `tx_end`: the last change of that transaction to this key), `doc` being the document
    /// then.
    fn settle(&mut self, doc: Option<&Value>, seq: i64, tx: i64, tx_end: bool) -> Result<()> {
        let mut insert = self.conn.prepare_cached(
            "INSERT INTO checkpoint (key, seq, tx, object) VALUES (?1, ?2, ?3, ?4)",
        )?;
        if let Some(obj) = self.survivors.get(&seq) {
            let same = match (obj, doc) {
                (Some(hex), Some(d)) => canon::hash(d).to_hex() == *hex,
                (None, None) => true,
                _ => false,
            };
            if same {
                insert.execute(params![self.key, seq, tx, obj])?;
                self.kept += 1;
                (self.count, self.bytes, self.ckpt_seq) = (0, 0, seq);
                return Ok(());
            }
        }
        if !tx_end {
            return Ok(());
        }
        let due = self.count >= CHECKPOINT_EVERY
            || (self.bytes > CHECKPOINT_MIN_BYTES && {
                let len = doc.map_or(0, |d| canon::to_canonical_string(d).len());
                self.bytes > i64::try_from(len).unwrap_or(i64::MAX)
            });
        if due {
            let object = match doc {
                Some(d) => Some(
                    self.objects
                        .put(canon::to_canonical_string(d).as_bytes())
                        .map_err(Error::io(self.objects.dir()))?
                        .to_hex(),
                ),
                None => None,
            };
            insert.execute(params![self.key, seq, tx, object])?;
            self.written += 1;
            (self.count, self.bytes, self.ckpt_seq) = (0, 0, seq);
        }
        Ok(())
    }
}

/// The stored length of a value: its canonical text (inline), or of the object's value.
fn value_len(text: Option<&str>, value: Option<&Value>) -> i64 {
    let len = match (text, value) {
        (Some(t), _) => t.len(),
        (None, Some(v)) => canon::to_canonical_string(v).len(),
        (None, None) => 0,
    };
    i64::try_from(len).unwrap_or(i64::MAX)
}

/// Recomputes the hash chain from transaction `from` on.
fn rechain(conn: &Connection, from: i64) -> Result<()> {
    let ids: Vec<i64> = {
        let mut stmt = conn.prepare("SELECT id FROM tx WHERE id >= ?1 ORDER BY id")?;
        stmt.query_map([from], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut update = conn.prepare_cached("UPDATE tx SET hash = ?1 WHERE id = ?2")?;
    for id in ids {
        let hash = crate::fsck::tx_hash(conn, id)?;
        update.execute(params![hash.to_vec(), id])?;
    }
    Ok(())
}

pub(crate) fn insert_compactions(conn: &Connection, tx: i64, rows: &[Compaction]) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO compaction (tx, key, path, rule, mode, replaced, kept, first_tx, last_tx,
             first_at, last_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    for c in rows {
        stmt.execute(params![
            tx,
            c.key,
            c.path.to_string(),
            c.rule,
            c.mode.as_str(),
            i64::try_from(c.replaced).unwrap_or(i64::MAX),
            i64::try_from(c.kept).unwrap_or(i64::MAX),
            c.first_tx,
            c.last_tx,
            c.first_at.to_string(),
            c.last_at.to_string()
        ])?;
    }
    Ok(())
}

/// The size of `hist.db` and its WAL.
fn db_size(dir: &Path) -> u64 {
    ["hist.db", "hist.db-wal"]
        .iter()
        .filter_map(|name| std::fs::metadata(dir.join(name)).ok())
        .map(|m| m.len())
        .sum()
}

/// True for a column that holds object ids, by the store's naming convention: `object`,
/// `obj`, or a name ending in `_obj` or `_object`. Any table following it is safe from gc.
fn is_object_column(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "object" || name == "obj" || name.ends_with("_obj") || name.ends_with("_object")
}

/// Every object id referenced from the database.
fn referenced_objects(conn: &Connection) -> Result<HashSet<String>> {
    let tables: Vec<String> = {
        let mut stmt = conn.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        )?;
        stmt.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut out = HashSet::new();
    for table in tables {
        let columns: Vec<String> = {
            let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
            stmt.query_map([&table], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?
        };
        for column in columns.iter().filter(|c| is_object_column(c)) {
            let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
            let sql = format!(
                "SELECT DISTINCT {c} FROM {t} WHERE {c} IS NOT NULL",
                c = quote(column),
                t = quote(&table)
            );
            let mut stmt = conn.prepare(&sql)?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                if let rusqlite::types::ValueRef::Text(t) = r.get_ref(0)? {
                    out.insert(String::from_utf8_lossy(t).to_ascii_lowercase());
                }
            }
        }
    }
    Ok(out)
}

impl Repo {
    /// What `gc` would do now (`now` is the clock's reading; the windows are measured back
    /// from it, or from the newest transaction if that is later). Writes nothing.
    pub fn gc_plan(&self, now: Timestamp) -> Result<GcPlan> {
        let newest = self.newest_tx()?.map(|t| t.at);
        let at = newest.map_or(now, |n| n.max(now));
        plan(&self.conn, &self.objects, self.rules(), at)
    }

    /// The compactions recorded for `key`, oldest first.
    pub fn compactions(&self, key: &str) -> Result<Vec<Compaction>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT tx, key, path, rule, mode, replaced, kept, first_tx, last_tx, first_at, last_at
             FROM compaction WHERE key = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([key], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?,
                (r.get::<_, i64>(5)?, r.get::<_, i64>(6)?),
                (r.get::<_, i64>(7)?, r.get::<_, i64>(8)?),
                (r.get::<_, String>(9)?, r.get::<_, String>(10)?),
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (tx, key, path, rule, mode, (replaced, kept), (first_tx, last_tx), (fa, la)) = row?;
            let bad = |what: &str| Error::Corrupt(format!("compaction record of tx {tx}: {what}"));
            out.push(Compaction {
                tx: Some(tx),
                key,
                path: DocPath::parse(&path).map_err(|e| bad(&e.to_string()))?,
                rule,
                mode: Then::parse(&mode).ok_or_else(|| bad("unknown mode"))?,
                replaced: usize::try_from(replaced).unwrap_or(0),
                kept: usize::try_from(kept).unwrap_or(0),
                first_tx,
                last_tx,
                first_at: Timestamp::parse_rfc3339(&fa).ok_or_else(|| bad("bad time"))?,
                last_at: Timestamp::parse_rfc3339(&la).ok_or_else(|| bad("bad time"))?,
            });
        }
        Ok(out)
    }

    /// Applies the retention rules (see the [module documentation](self)) as ONE logged
    /// transaction of kind `compact` made by `opts.actor` (when there is anything to
    /// compact), then deletes unreferenced objects and orphan temporary files and vacuums.
    pub fn gc(&mut self, mut opts: TxOptions) -> Result<GcOutcome> {
        let dir = self.hist_dir();
        let mut outcome = GcOutcome {
            db_bytes_before: db_size(&dir),
            ..GcOutcome::default()
        };
        opts.kind = "compact".to_owned();
        let mut txn = self.begin(opts)?;
        let plan = plan(txn.sql(), txn.objects(), txn.rules(), txn.info().at)?;
        if !plan.is_empty() {
            let first_tx = plan.compactions.iter().map(|c| c.first_tx).min();
            for kp in &plan.keys {
                let stats = rewrite_key(txn.sql(), txn.objects(), kp)?;
                outcome.checkpoints_written += stats.written;
                outcome.checkpoints_dropped += stats.dropped;
            }
            if let Some(first) = first_tx {
                rechain(txn.sql(), first)?;
            }
            let tx = txn.info().id;
            txn.compactions = plan
                .compactions
                .iter()
                .cloned()
                .map(|c| Compaction { tx: Some(tx), ..c })
                .collect();
            if txn.info().reason.is_none() {
                let reason = format!(
                    "retention: {} changes compacted into {}",
                    plan.replaced(),
                    plan.kept()
                );
                txn.set_reason(reason);
            }
        }
        let commit = txn.commit()?;
        outcome.tx = commit.tx;
        outcome.plan = GcPlan {
            compactions: plan
                .compactions
                .into_iter()
                .map(|c| Compaction {
                    tx: outcome.tx.as_ref().map(|t| t.id),
                    ..c
                })
                .collect(),
            ..plan
        };
        self.sweep_objects(&mut outcome)?;
        // VACUUM copies the whole database into a temporary one: on disk, not in memory
        // as the store's other temporary data is (`store::open`).
        self.conn
            .execute_batch("PRAGMA temp_store = FILE; VACUUM; PRAGMA temp_store = MEMORY;")?;
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        outcome.db_bytes_after = db_size(&dir);
        Ok(outcome)
    }

    /// Deletes objects nothing references and orphan temporary files, holding the write
    /// lock so that no writer is between writing an object and committing its row.
    fn sweep_objects(&mut self, outcome: &mut GcOutcome) -> Result<()> {
        let dir = self.objects.dir().to_path_buf();
        let lock = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let referenced = referenced_objects(&lock)?;
        for id in self.objects.list().map_err(Error::io(&dir))? {
            if referenced.contains(&id.to_hex()) {
                continue;
            }
            let path = self.objects.path_of(&id);
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            std::fs::remove_file(&path).map_err(Error::io(&path))?;
            outcome.objects_removed += 1;
            outcome.object_bytes_freed += size;
            if let Some(shard) = path.parent() {
                // Only succeeds when the shard is now empty.
                let _ = std::fs::remove_dir(shard);
            }
        }
        for entry in std::fs::read_dir(&dir).map_err(Error::io(&dir))? {
            let entry = entry.map_err(Error::io(&dir))?;
            let is_temp = entry.file_name().to_string_lossy().starts_with(".tmp-");
            if is_temp && entry.file_type().is_ok_and(|t| t.is_file()) {
                let size = entry.metadata().map_or(0, |m| m.len());
                std::fs::remove_file(entry.path()).map_err(Error::io(entry.path()))?;
                outcome.temp_files_removed += 1;
                outcome.object_bytes_freed += size;
            }
        }
        drop(lock);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_columns() {
        for yes in [
            "object",
            "obj",
            "old_obj",
            "new_obj",
            "raw_object",
            "OBJECT",
        ] {
            assert!(is_object_column(yes), "{yes}");
        }
        for no in ["objects_count", "hash", "doc", "objective", "key"] {
            assert!(!is_object_column(no), "{no}");
        }
    }

    #[test]
    fn compaction_span() {
        let c = Compaction {
            tx: Some(9),
            key: "k".into(),
            path: DocPath::root(),
            rule: 1,
            mode: Then::Daily,
            replaced: 4,
            kept: 2,
            first_tx: 3,
            last_tx: 6,
            first_at: Timestamp(0),
            last_at: Timestamp(1),
        };
        assert!(!c.covers_tx(2));
        assert!(c.covers_tx(3));
        assert!(c.covers_tx(5));
        assert!(!c.covers_tx(6));
    }
}
