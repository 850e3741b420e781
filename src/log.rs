//! The transaction log: transactions newest first, filtered by key, path, actor and time,
//! with their changes when asked.

use crate::diff;
use crate::error::Result;
use crate::model::{LoggedChange, TxInfo};
use crate::path::DocPath;
use crate::repo::Repo;
use crate::store::LogQuery;
use crate::time::When;

/// Which transactions `log` lists.
#[derive(Clone, Debug, Default)]
pub struct LogFilter {
    /// Only transactions that changed this key.
    pub key: Option<String>,
    /// Only changes at, above or below this path (needs `key`… or applies to every key).
    pub path: Option<DocPath>,
    /// Only this actor.
    pub actor: Option<String>,
    /// Only at or after.
    pub since: Option<When>,
    /// Only at or before.
    pub until: Option<When>,
    /// At most this many.
    pub limit: Option<usize>,
    /// Also load each transaction's changes (matching the key and path filters).
    pub with_changes: bool,
}

/// A transaction as `log` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct LogEntry {
    /// The transaction.
    pub tx: TxInfo,
    /// How many changes it made (all keys).
    pub change_count: usize,
    /// Its changes, when asked for.
    pub changes: Vec<LoggedChange>,
}

impl Repo {
    /// Transactions, newest first, filtered.
    pub fn log(&self, filter: &LogFilter) -> Result<Vec<LogEntry>> {
        self.snapshot(|| {
            if let Some(key) = &filter.key {
                crate::model::check_key(key)?;
            }
            let found = self.store.log(&LogQuery {
                key: filter.key.as_deref(),
                path: filter.path.as_ref(),
                actor: filter.actor.as_deref(),
                since: filter.since,
                until: filter.until,
                limit: filter.limit,
            })?;
            let out = found.into_iter().map(|(tx, change_count)| LogEntry {
                tx,
                change_count,
                changes: Vec::new(),
            });
            if filter.path.is_some() {
                // A write above the path counts only when it altered the value at the
                // path: refined here, and limited after that.
                let mut kept = Vec::new();
                for mut entry in out {
                    let changes =
                        self.tx_changes(&entry.tx, filter.key.as_deref(), filter.path.as_ref())?;
                    if !changes.is_empty() {
                        if filter.with_changes {
                            entry.changes = changes;
                        }
                        kept.push(entry);
                    }
                    if filter.limit.is_some_and(|n| kept.len() >= n) {
                        break;
                    }
                }
                return Ok(kept);
            }
            let mut out: Vec<LogEntry> = out.collect();
            if filter.with_changes {
                for entry in &mut out {
                    entry.changes = self.tx_changes(&entry.tx, filter.key.as_deref(), None)?;
                }
            }
            Ok(out)
        })
    }

    /// The changes of one transaction, optionally only those of `key` at/above/below `path`.
    pub fn tx_changes(
        &self,
        tx: &TxInfo,
        key: Option<&str>,
        path: Option<&DocPath>,
    ) -> Result<Vec<LoggedChange>> {
        let mut out = Vec::new();
        for (k, row) in self.store.tx_changes(tx.id)? {
            if key.is_some_and(|key| key != k) {
                continue;
            }
            let id = row.id;
            let change = self.store.load_change(row)?;
            if let Some(path) = path {
                let keep = match path.strip_prefix(&change.path) {
                    Some(rest) => {
                        let old = change.old.as_ref().and_then(|v| diff::get(v, rest));
                        let new = change.new.as_ref().and_then(|v| diff::get(v, rest));
                        old != new
                    }
                    None => change.path.starts_with(path),
                };
                if !keep {
                    continue;
                }
            }
            out.push(LoggedChange {
                id,
                tx: tx.clone(),
                key: k,
                change: self.unseal_change(change)?,
            });
        }
        Ok(out)
    }
}
