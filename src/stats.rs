//! Statistics of a key's changes per path over a span: which paths changed, how often, and
//! in which transactions — the brief's `GROUP BY path` query, answered by the library
//! without SQL text, over both tiers of the log.
//!
//! ```text
//! SELECT path, count(*) AS changes FROM changes
//! WHERE key = ?KEY AND at >= ?SINCE AND at <= ?UNTIL AND (path = ?P OR path below ?P)
//! GROUP BY path ORDER BY changes DESC, path
//! ```
//!
//! A change counts where it was recorded: a whole object written at once is one change at
//! the object's path, not one per field inside it; a change that `gc` compacted counts
//! once (it stands for several, see [`crate::Compaction`]). No value is read, and a segment
//! of the log that touches no path of the subtree asked about is not decompressed.

use crate::error::Result;
use crate::path::DocPath;
use crate::repo::Repo;
use crate::time::{Timestamp, When};

/// Which of a key's changes [`Repo::path_stats`] counts.
#[derive(Clone, Debug, Default)]
pub struct StatsFilter {
    /// Only changes at this path or below it (`None`, or the root: every change).
    pub path: Option<DocPath>,
    /// Only transactions at or after this moment (`@tx:N`: from transaction N on).
    pub since: Option<When>,
    /// Only transactions at or before this moment (`@tx:N`: up to transaction N).
    pub until: Option<When>,
}

/// The changes at one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathStats {
    /// The path the changes were recorded at.
    pub path: DocPath,
    /// How many.
    pub changes: u64,
    /// The transaction of the first.
    pub first_tx: i64,
    /// The transaction of the last.
    pub last_tx: i64,
}

/// What [`Repo::path_stats`] counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyStats {
    /// How many changes in all.
    pub changes: u64,
    /// Every path that changed, the most changed first (equal counts in the order of the
    /// paths' text).
    pub paths: Vec<PathStats>,
    /// Every transaction that made a counted change, oldest first, with how many it made.
    pub transactions: Vec<(i64, u64)>,
}

/// The versions of a key a span covers: `after < seq <= upto`.
pub(crate) type SeqRange = (i64, i64);

impl Repo {
    /// How many changes each path of `key` had in the span and subtree `filter` selects,
    /// most changed first, and which transactions made them. A key that was never written
    /// has no changes.
    pub fn path_stats(&self, key: &str, filter: &StatsFilter) -> Result<KeyStats> {
        self.snapshot(|| {
            crate::model::check_key(key)?;
            let Some((key_id, range)) = self.key_span(key, filter.since, filter.until)? else {
                return Ok(KeyStats::default());
            };
            let wanted = match &filter.path {
                Some(p) => self.store.subtree_path_ids(p)?,
                None => None,
            };
            let counts = self.store.change_counts(key_id, range, wanted.as_deref())?;
            let mut paths = Vec::with_capacity(counts.paths.len());
            for (id, tally) in counts.paths {
                let text = self.store.path_text(id)?;
                paths.push((
                    text.clone(),
                    PathStats {
                        path: crate::store::stored_path(&text)?,
                        changes: tally.changes,
                        first_tx: tally.first_tx,
                        last_tx: tally.last_tx,
                    },
                ));
            }
            paths.sort_by(|(ta, a), (tb, b)| b.changes.cmp(&a.changes).then_with(|| ta.cmp(tb)));
            Ok(KeyStats {
                changes: counts.txs.values().sum(),
                paths: paths.into_iter().map(|(_, p)| p).collect(),
                transactions: counts.txs.into_iter().collect(),
            })
        })
    }

    /// The number of `key` in the log and the versions of it that the transactions between
    /// `since` and `until` made (`None`: the key has no change at all).
    pub(crate) fn key_span(
        &self,
        key: &str,
        since: Option<When>,
        until: Option<When>,
    ) -> Result<Option<(i64, SeqRange)>> {
        let Some(key_id) = self.store.key_id(key)? else {
            return Ok(None);
        };
        // The last transaction before the span, and the last in it.
        let before = match since {
            None => 0,
            Some(When::Tx(id)) => id.saturating_sub(1),
            Some(When::At(Timestamp(t))) => self
                .store
                .resolve(When::At(Timestamp(t.saturating_sub(1))))?
                .unwrap_or(0),
        };
        let last = match until {
            None => i64::MAX,
            Some(when) => self.store.resolve(when)?.unwrap_or(0),
        };
        let after = self.store.version_at(key, before)?;
        let upto = self.store.version_at(key, last)?;
        Ok(Some((key_id, (after, upto.max(after)))))
    }
}
