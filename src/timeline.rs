//! A key's history laid out on a time axis cut into columns: what `hist timeline` draws.
//!
//! [`Repo::timeline`] reads what a picture of the span shows and nothing more: every
//! transaction that changed the key (or the subtree asked about), each placed in a column of
//! the axis; the most changed paths ([`Repo::path_stats`]) as lanes, each lane's changes
//! merged per column into one [`Mark`] (how many changes, the value before the first and
//! after the last, the range a number went through); the spans `gc` compacted and the
//! values whose subject was forgotten. However long the history, a lane holds at most one
//! mark per column, so what a page embeds is bounded by lanes × columns.

use crate::canon::Value;
use crate::error::Result;
use crate::model::{Op, TxInfo};
use crate::path::DocPath;
use crate::repo::Repo;
use crate::retention::Compaction;
use crate::stats::{KeyStats, StatsFilter};
use crate::time::{Timestamp, When};

/// What [`Repo::timeline`] lays out.
#[derive(Clone, Debug)]
pub struct TimelineOptions {
    /// Only changes at this path or below it.
    pub path: Option<DocPath>,
    /// Only transactions at or after this moment; the axis starts there when it is a time.
    pub since: Option<When>,
    /// Only transactions at or before this moment; the axis ends there when it is a time.
    pub until: Option<When>,
    /// How many paths get a lane (the most changed ones).
    pub lanes: usize,
    /// How many columns the axis is cut into (a page draws one per pixel).
    pub columns: usize,
}

impl Default for TimelineOptions {
    fn default() -> Self {
        Self {
            path: None,
            since: None,
            until: None,
            lanes: 30,
            columns: 960,
        }
    }
}

/// A key's history over a span, laid out on an axis of [`Timeline::columns`] columns.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// The key.
    pub key: String,
    /// The subtree asked about (`None`: the whole document).
    pub path: Option<DocPath>,
    /// The moment at the left edge of the axis.
    pub start: Timestamp,
    /// The moment at the right edge.
    pub end: Timestamp,
    /// How many columns the axis has.
    pub columns: usize,
    /// Every transaction that changed the key (the subtree) in the span, oldest first.
    pub transactions: Vec<TimelineTx>,
    /// The most changed paths, most changed first.
    pub lanes: Vec<Lane>,
    /// How many changes in all.
    pub changes: u64,
    /// How many paths changed in all (lanes included).
    pub paths: usize,
    /// How many changes were made at paths without a lane.
    pub changes_not_shown: u64,
    /// The spans `gc` compacted at paths of the key that overlap the subtree and the span.
    pub compactions: Vec<Compaction>,
}

impl Timeline {
    /// How many paths changed that have no lane.
    pub fn paths_not_shown(&self) -> usize {
        self.paths - self.lanes.len()
    }
}

/// A transaction on the axis.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineTx {
    /// The transaction.
    pub tx: TxInfo,
    /// How many changes it made to the key (the subtree).
    pub changes: u64,
    /// Its column.
    pub column: usize,
}

/// One path's changes.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// The path.
    pub path: DocPath,
    /// How many changes it had in the span.
    pub changes: u64,
    /// True when every value the path held in the span is a number (or null), and one is:
    /// the marks' values draw a line.
    pub numeric: bool,
    /// Its changes merged per column, in column order: those recorded at the path, and
    /// those recorded at an ancestor that altered the value at the path.
    pub marks: Vec<Mark>,
}

/// The changes of one path in one column of the axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// The column.
    pub column: usize,
    /// How many changes (recorded at the lane's path, or above it).
    pub changes: u64,
    /// How many of them were recorded at an ancestor of the lane's path (a whole object
    /// written or removed at once), projected onto it.
    pub above: u64,
    /// The transaction of the first.
    pub first_tx: i64,
    /// The transaction of the last.
    pub last_tx: i64,
    /// What the changes did together: `None` when the value appeared and went again within
    /// the column. A move (rename) is `Move`, with `old` the path it came from.
    pub op: Option<Op>,
    /// The value before the first change (absent: there was none).
    pub old: Option<Value>,
    /// The value after the last change.
    pub new: Option<Value>,
    /// The smallest and largest number the path held after each change of the column.
    pub range: Option<(f64, f64)>,
    /// True when one of the changes lies in a span compacted by `gc` (it stands for
    /// several).
    pub compacted: bool,
    /// True when a value of the changes belongs to a forgotten subject.
    pub forgotten: bool,
}

impl Repo {
    /// `key`'s history in the span and subtree `opts` selects, laid out for a picture:
    /// transactions placed on the axis, the `opts.lanes` most changed paths with their
    /// changes merged per column. A key that was never written gives an empty timeline.
    pub fn timeline(&self, key: &str, opts: &TimelineOptions) -> Result<Timeline> {
        self.snapshot(|| {
            let filter = StatsFilter {
                path: opts.path.clone(),
                since: opts.since,
                until: opts.until,
            };
            let stats = self.path_stats(key, &filter)?;
            let mut transactions = Vec::with_capacity(stats.transactions.len());
            for &(id, changes) in &stats.transactions {
                let tx = self.tx(id)?.ok_or_else(|| {
                    crate::Error::Corrupt(format!(
                        "{key}: a change names a missing transaction {id}"
                    ))
                })?;
                transactions.push(TimelineTx {
                    tx,
                    changes,
                    column: 0,
                });
            }
            let axis = Axis::new(self, opts, &transactions)?;
            for t in &mut transactions {
                t.column = axis.column(t.tx.at);
            }
            let compactions = self
                .compactions(key)?
                .into_iter()
                .filter(|c| {
                    let in_subtree = opts
                        .path
                        .as_ref()
                        .is_none_or(|p| c.path.starts_with(p) || p.starts_with(&c.path));
                    in_subtree && c.last_at >= axis.start && c.first_at <= axis.end
                })
                .collect();
            let at_of: rustc_hash::FxHashMap<i64, Timestamp> =
                transactions.iter().map(|t| (t.tx.id, t.tx.at)).collect();
            let lanes = self.lanes(key, opts, &stats, |tx| {
                axis.column(at_of.get(&tx).copied().unwrap_or(axis.start))
            })?;
            let shown: u64 = lanes.iter().map(|l| l.changes).sum();
            Ok(Timeline {
                key: key.to_owned(),
                path: opts.path.clone(),
                start: axis.start,
                end: axis.end,
                columns: axis.columns,
                transactions,
                changes: stats.changes,
                paths: stats.paths.len(),
                changes_not_shown: stats.changes - shown,
                lanes,
                compactions,
            })
        })
    }

    /// The lanes of the `opts.lanes` most changed paths of `stats` (`column_of`: the
    /// column of a transaction). A change at an ancestor of a lane's path that altered the
    /// value there (a whole item added or removed) is projected onto the lane.
    fn lanes(
        &self,
        key: &str,
        opts: &TimelineOptions,
        stats: &KeyStats,
        column_of: impl Fn(i64) -> usize,
    ) -> Result<Vec<Lane>> {
        let top = &stats.paths[..stats.paths.len().min(opts.lanes)];
        let Some((key_id, range)) = self.key_span(key, opts.since, opts.until)? else {
            return Ok(Vec::new());
        };
        // By path number: the lanes a change there goes to, with the rest of the lane's
        // path below it (empty: the lane's own path).
        let mut lanes_of: rustc_hash::FxHashMap<u64, Vec<(usize, usize)>> = Default::default();
        for (i, p) in top.iter().enumerate() {
            let mut at = p.path.ancestors();
            at.push(p.path.clone());
            for a in at {
                if let Some(id) = self.store.path_id(&a.to_string())? {
                    let id = u64::try_from(id).unwrap_or(u64::MAX);
                    lanes_of
                        .entry(id)
                        .or_default()
                        .push((i, a.segments().len()));
                }
            }
        }
        let mut ids: Vec<u64> = lanes_of.keys().copied().collect();
        ids.sort_unstable();
        let spans = self.compactions(key)?;
        let personal = self.keys.personal_seen(&self.store)?;
        let mut building: Vec<LaneBuilder> = top.iter().map(|_| LaneBuilder::default()).collect();
        for stored in self.store.changes_at(key_id, range, &ids)? {
            let Some(targets) = lanes_of.get(&u64::try_from(stored.path_id).unwrap_or(u64::MAX))
            else {
                continue;
            };
            let tx = stored.tx;
            let mut change = self.store.load_change(stored)?;
            if personal {
                change = self.unseal_change(change)?;
            }
            let compacted = change.op != Op::Move
                && spans.iter().any(|c| {
                    c.first_tx <= tx && tx <= c.last_tx && change.path.starts_with(&c.path)
                });
            for &(lane, depth) in targets {
                let below = &top[lane].path.segments()[depth..];
                if below.is_empty() {
                    building[lane].push(column_of(tx), tx, change.clone(), compacted, false);
                    continue;
                }
                if change.op == Op::Move {
                    continue;
                }
                let project = |v: &Option<Value>| {
                    v.as_ref().and_then(|v| crate::diff::get(v, below)).cloned()
                };
                let (old, new) = (project(&change.old), project(&change.new));
                if let Some(op) = Op::between(old.as_ref(), new.as_ref()).filter(|_| old != new) {
                    let projected = crate::model::Change {
                        path: top[lane].path.clone(),
                        op,
                        old,
                        new,
                    };
                    building[lane].push(column_of(tx), tx, projected, compacted, true);
                }
            }
        }
        Ok(top
            .iter()
            .zip(building)
            .map(|(p, b)| b.finish(p.path.clone(), p.changes))
            .collect())
    }
}

/// The axis: the span from `start` to `end` cut into `columns` columns.
struct Axis {
    start: Timestamp,
    end: Timestamp,
    columns: usize,
}

impl Axis {
    /// The axis of `opts`: from `since` (when a time) or the first transaction, to `until`
    /// (when a time) or the last.
    fn new(repo: &Repo, opts: &TimelineOptions, txs: &[TimelineTx]) -> Result<Self> {
        let first = txs.first().map(|t| t.tx.at);
        let last = txs.last().map(|t| t.tx.at);
        let bound = |when: Option<When>, found: Option<Timestamp>| -> Result<Option<Timestamp>> {
            Ok(match when {
                Some(When::At(ts)) => Some(ts),
                Some(When::Tx(id)) => repo.tx(id)?.map(|t| t.at).or(found),
                None => found,
            })
        };
        let start = bound(opts.since, first)?.unwrap_or(Timestamp(0));
        let end = bound(opts.until, last)?.unwrap_or(start).max(start);
        Ok(Self {
            start,
            end,
            columns: opts.columns.max(1),
        })
    }

    /// The column of moment `at` (clamped to the axis).
    fn column(&self, at: Timestamp) -> usize {
        let span = i128::from(self.end.0) - i128::from(self.start.0);
        if span <= 0 {
            return 0;
        }
        let offset = (i128::from(at.0) - i128::from(self.start.0)).clamp(0, span);
        let columns = i128::try_from(self.columns).unwrap_or(i128::MAX);
        let column = (offset * columns / span).min(columns - 1);
        usize::try_from(column).unwrap_or(0)
    }
}

/// A lane being built, change by change (oldest first).
#[derive(Default)]
struct LaneBuilder {
    marks: Vec<Mark>,
    /// A number was seen, and so far only numbers and nulls.
    numbers: bool,
    other: bool,
}

impl LaneBuilder {
    fn push(
        &mut self,
        column: usize,
        tx: i64,
        change: crate::model::Change,
        compacted: bool,
        above: bool,
    ) {
        let forgotten = [&change.old, &change.new]
            .into_iter()
            .flatten()
            .any(holds_forgotten);
        if change.op != Op::Move {
            for v in [&change.old, &change.new].into_iter().flatten() {
                match v {
                    Value::Number(_) => self.numbers = true,
                    Value::Null => {}
                    _ => self.other = true,
                }
            }
        }
        let number = change.new.as_ref().and_then(Value::as_f64);
        match self.marks.last_mut() {
            Some(m) if m.column == column => {
                m.changes += 1;
                m.above += u64::from(above);
                m.last_tx = tx;
                m.new = change.new;
                m.op = if change.op == Op::Move || m.op == Some(Op::Move) {
                    Some(Op::Move)
                } else {
                    Op::between(m.old.as_ref(), m.new.as_ref())
                };
                m.range = match (m.range, number) {
                    (Some((lo, hi)), Some(n)) => Some((lo.min(n), hi.max(n))),
                    (r, n) => r.or(n.map(|n| (n, n))),
                };
                m.compacted |= compacted;
                m.forgotten |= forgotten;
            }
            _ => self.marks.push(Mark {
                column,
                changes: 1,
                above: u64::from(above),
                first_tx: tx,
                last_tx: tx,
                op: Some(change.op),
                old: change.old,
                new: change.new,
                range: number.map(|n| (n, n)),
                compacted,
                forgotten,
            }),
        }
    }

    fn finish(self, path: DocPath, changes: u64) -> Lane {
        Lane {
            path,
            changes,
            numeric: self.numbers && !self.other,
            marks: self.marks,
        }
    }
}

/// True when `value` is, or holds, the marker of a forgotten value.
fn holds_forgotten(value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            map.contains_key(crate::shred::FORGOTTEN) || map.values().any(holds_forgotten)
        }
        Value::Array(items) => items.iter().any(holds_forgotten),
        _ => false,
    }
}
