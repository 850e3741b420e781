//! Export: the change log as a stream of changes, each with its transaction.
//!
//! [`Repo::export`] reads the log in the order it was written (change id order, so
//! transaction order) and hands each change to a callback as soon as its row is read: the
//! memory it uses does not grow with the length of the log. The CLI prints each one as an
//! NDJSON line (`hist export`).

use crate::error::{Error, Result};
use crate::model::LoggedChange;
use crate::repo::Repo;
use crate::time::When;
use std::ops::ControlFlow;

/// Which changes [`Repo::export`] reads.
#[derive(Clone, Debug, Default)]
pub struct ExportFilter {
    /// Only keys matching this glob (`*` and `?` also match `/`, as in `--keys` of rules).
    pub keys: Option<String>,
    /// Only transactions at or after this moment (`@tx:N`: from transaction N on).
    pub since: Option<When>,
}

impl Repo {
    /// Calls `each` with every change that `filter` selects, oldest first, streaming.
    /// `each` may stop the export early by returning [`ControlFlow::Break`]. Returns how
    /// many changes were passed to `each`.
    pub fn export<E: From<Error>>(
        &self,
        filter: &ExportFilter,
        mut each: impl FnMut(LoggedChange) -> Result<ControlFlow<()>, E>,
    ) -> Result<u64, E> {
        let keys = filter
            .keys
            .as_deref()
            .map(crate::rules::key_matcher)
            .transpose()?;
        let mut count = 0u64;
        self.store.each_change(filter.since, |tx, key, stored| {
            if keys.as_ref().is_some_and(|m| !m.is_match(&key)) {
                return Ok(ControlFlow::Continue(()));
            }
            let id = stored.id;
            let change = self.store.load_change(stored)?;
            count += 1;
            each(LoggedChange {
                id,
                tx,
                key,
                change,
            })
        })?;
        Ok(count)
    }
}
