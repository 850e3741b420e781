//! Retention compaction: which changes `gc` replaces, and the rewrite of a key's log.
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

use super::{GcPlan, KeyPlan, Merge};
use crate::canon;
use crate::canon::Value;
use crate::diff;
use crate::error::{Error, Result};
use crate::model::{Change, ChangeText, Op};
use crate::path::DocPath;
use crate::retention::{Compaction, Retention, Then};
use crate::rules::{KeyRules, Rule, RuleKind};
use crate::store::checkpoint;
use crate::store::{self, Order, Store, Stored, WriteTxn};
use crate::time::Timestamp;
use std::collections::{BTreeMap, HashMap};

/// Changes read at once while a key's log is replayed.
const PAGE: i64 = 4096;

/// Transaction times, each read once.
#[derive(Default)]
struct TxTimes(HashMap<i64, Timestamp>);

impl TxTimes {
    fn at(&mut self, store: &Store, tx: i64) -> Result<Timestamp> {
        if let Some(at) = self.0.get(&tx) {
            return Ok(*at);
        }
        let info = store
            .tx(tx)?
            .ok_or_else(|| Error::Corrupt(format!("a change names a missing transaction {tx}")))?;
        self.0.insert(tx, info.at);
        Ok(info.at)
    }
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

/// Plans the compaction of every key under the retention rules, as of `at`.
pub(super) fn plan(store: &Store, rules: &[Rule], at: Timestamp) -> Result<GcPlan> {
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
    let mut times = TxTimes::default();
    for key in &store.written_keys()? {
        let mut retention = KeyRetention::new(rules, key, at);
        let Some(latest) = retention.latest_cutoff() else {
            continue;
        };
        let Some(key_id) = store.key_id(key)? else {
            continue;
        };
        let oldest = store.changes(key_id, 0, 1, Order::OldestFirst)?;
        match oldest.first() {
            Some(first) if times.at(store, first.tx)?.0 < latest => {}
            _ => continue,
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
        let mut after = 0;
        'rows: loop {
            let page = store.changes(key_id, after, after + PAGE, Order::OldestFirst)?;
            if page.is_empty() {
                break;
            }
            after += PAGE;
            for row in page {
                let (id, tx) = (row.id, row.tx);
                let when = times.at(store, tx)?;
                if when.0 >= latest {
                    // Nothing from here on is old enough; the document holds the state after
                    // every open group's last change (a change touching one would have ended it).
                    break 'rows;
                }
                let path = row.path.clone();
                let change = store.load_change(row)?;
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
pub(super) struct CheckpointStats {
    pub(super) written: usize,
    pub(super) dropped: usize,
}

/// Rewrites one key: deletes and rewrites its rows, renumbers `seq`, rebuilds its
/// checkpoints and its `doc` row. Returns the checkpoint counts.
pub(super) fn rewrite_key(w: &WriteTxn<'_>, kp: &KeyPlan) -> Result<CheckpointStats> {
    let key = &kp.key;
    let store = w.store();
    let merges: Vec<store::Merge> = kp
        .merges
        .iter()
        .map(|m| store::Merge {
            row: m.row,
            change: ChangeText::of(&Change {
                path: m.path.clone(),
                op: Op::between(m.old.as_ref(), m.new.as_ref()).unwrap_or(Op::Replace),
                old: m.old.clone(),
                new: m.new.clone(),
            }),
        })
        .collect();
    if let Some(key_id) = store.key_id(key)? {
        w.unseal_key(key_id)?;
    }
    let old = w.rewrite_key_log(&store::KeyRewrite {
        key,
        deleted: &kp.deleted,
        merges: &merges,
    })?;
    let mut rebuild = Rebuild {
        w,
        key,
        survivors: old.survivors,
        rules: KeyRules::for_key(&store.rules()?, key),
        values_only: false,
        count: 0,
        bytes: 0,
        ckpt_seq: 0,
        written: 0,
        kept: 0,
    };
    let mut doc: Option<Value> = None;
    let mut last: Option<(i64, i64)> = None;
    let key_id = store.key_id(key)?.unwrap_or(0);
    let mut after = 0;
    loop {
        let page = store.changes(key_id, after, after + PAGE, Order::OldestFirst)?;
        if page.is_empty() {
            break;
        }
        after += PAGE;
        for row in page {
            let (seq, tx) = (row.seq, row.tx);
            if let Some((pseq, ptx)) = last {
                rebuild.settle(doc.as_ref(), pseq, ptx, ptx != tx)?;
            }
            if last.is_none_or(|(_, ptx)| ptx != tx) {
                rebuild.values_only = true;
            }
            rebuild.values_only &= row.op == Op::Replace;
            let inline = |v: &Stored| match v {
                Stored::Text(t) => Some(t.len()),
                _ => None,
            };
            let (old_len, new_len) = (inline(&row.old), inline(&row.new));
            let change = store.load_change(row)?;
            diff::apply(&mut doc, &change).map_err(|e| replay_error(key, &e))?;
            rebuild.count += 1;
            rebuild.bytes +=
                value_len(old_len, change.old.as_ref()) + value_len(new_len, change.new.as_ref());
            last = Some((seq, tx));
        }
    }
    if let Some((seq, tx)) = last {
        rebuild.settle(doc.as_ref(), seq, tx, true)?;
    }
    let stats = CheckpointStats {
        written: rebuild.written,
        dropped: old.before.saturating_sub(rebuild.kept),
    };
    let (current, hash) = store.doc_text_and_hash(key)?;
    let replayed = doc.as_ref().map(|d| canon::hash(d).0.to_vec());
    if replayed != hash || current.is_some() != doc.is_some() {
        return Err(Error::Corrupt(format!(
            "{key}: the compacted log does not replay to the current document; gc changed nothing"
        )));
    }
    match last {
        Some(position) => w.set_doc_position(
            key,
            position,
            (rebuild.ckpt_seq, rebuild.count, rebuild.bytes),
        )?,
        None => w.delete_doc(key)?,
    }
    Ok(stats)
}

/// Rebuilds one key's checkpoints while its rewritten log is replayed: an old checkpoint
/// is kept where its version survived and still matches; elsewhere a new one is written by
/// the policy every commit follows ([`checkpoint::due`]).
struct Rebuild<'a> {
    w: &'a WriteTxn<'a>,
    key: &'a str,
    /// Old checkpoints by their new version number.
    survivors: HashMap<i64, store::Checkpoint>,
    /// The key's rules, naming the leaves of the checkpoints it writes…
    rules: KeyRules,
    /// …when the transaction they follow only replaced values (as a commit decides).
    values_only: bool,
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
        if let Some(old) = self.survivors.get(&seq) {
            let same = match (&old.object, doc) {
                (Some(hex), Some(d)) => canon::hash(d).to_hex() == *hex,
                (None, None) => true,
                _ => false,
            };
            if same {
                // Its leaves again, if it had some: those stored against others name
                // them by version.
                let leaves = match doc.filter(|_| old.leaves.is_some()) {
                    Some(d) => self.w.store().leaves_of(
                        self.key,
                        seq,
                        &canon::to_canonical_string(d),
                        &self.rules,
                    )?,
                    None => None,
                };
                let kept = store::Checkpoint {
                    leaves,
                    ..old.clone()
                };
                self.w.insert_checkpoint(self.key, tx, &kept)?;
                self.kept += 1;
                (self.count, self.bytes, self.ckpt_seq) = (0, 0, seq);
                return Ok(());
            }
        }
        if !tx_end {
            return Ok(());
        }
        let len = || {
            let len = doc.map_or(0, |d| canon::to_canonical_string(d).len());
            i64::try_from(len).unwrap_or(i64::MAX)
        };
        if checkpoint::due(self.count, self.bytes, len) {
            let text = doc.map(canon::to_canonical_string);
            self.w.write_checkpoint(
                self.key,
                seq,
                tx,
                text.as_deref(),
                self.values_only.then_some(&self.rules),
            )?;
            self.written += 1;
            (self.count, self.bytes, self.ckpt_seq) = (0, 0, seq);
        }
        Ok(())
    }
}

/// The stored length of a value: its canonical text (inline), or of the object's value.
fn value_len(text: Option<usize>, value: Option<&Value>) -> i64 {
    let len = match (text, value) {
        (Some(n), _) => n,
        (None, Some(v)) => canon::to_canonical_string(v).len(),
        (None, None) => 0,
    };
    i64::try_from(len).unwrap_or(i64::MAX)
}
