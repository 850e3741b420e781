//! `gc`: applies retention rules ([`compact`]: compaction of old changes, as one logged
//! transaction of kind `compact`), then deletes unreferenced objects and orphan temporary
//! files ([`sweep`]) and vacuums the database.

mod compact;
mod sweep;

use crate::canon::Value;
use crate::error::Result;
use crate::model::TxInfo;
use crate::path::DocPath;
use crate::repo::{Repo, TxOptions};
use crate::retention::Compaction;
use crate::store::Record;
use crate::time::Timestamp;

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
    /// Changes moved from the log's recent rows into sealed segments.
    pub changes_sealed: usize,
    /// `hist.db` (with its WAL) before gc, in bytes.
    pub db_bytes_before: u64,
    /// …and after the vacuum.
    pub db_bytes_after: u64,
}

/// The rewrites of one key.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyPlan {
    key: String,
    /// Change rows to delete.
    deleted: Vec<i64>,
    /// Change rows to rewrite as the replacement of their group.
    merges: Vec<Merge>,
}

#[derive(Clone, Debug)]
pub(crate) struct Merge {
    row: i64,
    path: DocPath,
    old: Option<Value>,
    new: Option<Value>,
}

/// `gc` seals a key's recent changes when there are at least this many.
const SEAL_AT_GC: i64 = 64;

impl Repo {
    /// What `gc` would do now (`now` is the clock's reading; the windows are measured back
    /// from it, or from the newest transaction if that is later). Writes nothing.
    pub fn gc_plan(&self, now: Timestamp) -> Result<GcPlan> {
        let newest = self.newest_tx()?.map(|t| t.at);
        let at = newest.map_or(now, |n| n.max(now));
        compact::plan(&self.store, &self.rules(), at)
    }

    /// Seals the recent changes of every key that has at least `min_changes` of them into
    /// segments, and merges each key's small segments; returns how many changes were
    /// sealed. hist seals by itself as the log grows (and `gc` does this with 64); this is
    /// for a caller who wants the log compact now. It changes no answer and records no
    /// transaction.
    pub fn seal(&mut self, min_changes: usize) -> Result<usize> {
        let write = self.store.begin_write()?;
        let sealed = write.seal_tails(i64::try_from(min_changes.max(1)).unwrap_or(i64::MAX))?;
        write.commit_rows()?;
        Ok(sealed)
    }

    /// The compactions recorded for `key`, oldest first.
    pub fn compactions(&self, key: &str) -> Result<Vec<Compaction>> {
        self.store.compactions(key)
    }

    /// Applies the retention rules (see [`compact`]) as ONE logged transaction of kind
    /// `compact` made by `opts.actor` (when there is anything to compact), then deletes
    /// unreferenced objects and orphan temporary files and vacuums.
    pub fn gc(&mut self, mut opts: TxOptions) -> Result<GcOutcome> {
        let mut outcome = GcOutcome {
            db_bytes_before: self.store.db_size(),
            ..GcOutcome::default()
        };
        opts.kind = "compact".to_owned();
        let mut txn = self.begin(opts)?;
        let plan = compact::plan(txn.store(), txn.rules(), txn.info().at)?;
        if !plan.is_empty() {
            let first_tx = plan.compactions.iter().map(|c| c.first_tx).min();
            for kp in &plan.keys {
                let stats = compact::rewrite_key(txn.write(), kp)?;
                outcome.checkpoints_written += stats.written;
                outcome.checkpoints_dropped += stats.dropped;
            }
            if let Some(first) = first_tx {
                txn.write().rechain(first)?;
            }
        }
        // Every tail of some length is sealed, and small segments merged (sealing changes no
        // answer and no hash: it is not recorded as a transaction).
        outcome.changes_sealed = txn.write().seal_tails(SEAL_AT_GC)?;
        if !plan.is_empty() {
            let tx = txn.info().id;
            for c in &plan.compactions {
                txn.push_record(Record::Compaction(Compaction {
                    tx: Some(tx),
                    ..c.clone()
                }));
            }
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
        sweep::sweep_objects(&self.store, &mut outcome)?;
        self.store.vacuum()?;
        outcome.db_bytes_after = self.store.db_size();
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retention::Then;

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
