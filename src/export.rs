//! Export: the change log as a stream of changes, each with its transaction.
//!
//! [`Repo::export`] reads the log in the order it was written (change id order, so
//! transaction order) and hands each change to a callback as soon as its row is read: the
//! memory it uses does not grow with the length of the log. The CLI prints each one as an
//! NDJSON line (`hist export`).

use crate::error::{Error, Result};
use crate::model::LoggedChange;
use crate::repo::{Repo, change_from_row, tx_from_row};
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
            .map(|glob| {
                globset::Glob::new(glob)
                    .map(|g| g.compile_matcher())
                    .map_err(|e| Error::Glob {
                        glob: glob.to_owned(),
                        message: e.to_string(),
                    })
            })
            .transpose()?;
        let (cond, since): (&str, Box<dyn rusqlite::ToSql>) = match filter.since {
            None => ("1 = 1 OR ?1 IS NULL", Box::new(0)),
            Some(When::Tx(id)) => ("t.id >= ?1", Box::new(id)),
            Some(When::At(ts)) => ("t.at >= ?1", Box::new(ts.to_string())),
        };
        let sql = format!(
            "SELECT t.id, t.at, t.actor, t.reason, t.kind,
                    c.id, k.key, c.path, c.op, c.old, c.new, c.old_obj, c.new_obj
             FROM change_log c JOIN change_key k ON k.id = c.key_id JOIN tx t ON t.id = c.tx
             WHERE {cond} ORDER BY c.id"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(Error::from)?;
        let mut rows = stmt.query([since]).map_err(Error::from)?;
        let mut count = 0u64;
        while let Some(row) = rows.next().map_err(Error::from)? {
            let key: String = row.get(6).map_err(Error::from)?;
            if keys.as_ref().is_some_and(|m| !m.is_match(&key)) {
                continue;
            }
            let record = read_row(self, row, key)?;
            count += 1;
            if each(record)?.is_break() {
                break;
            }
        }
        Ok(count)
    }
}

fn read_row(repo: &Repo, row: &rusqlite::Row<'_>, key: String) -> Result<LoggedChange> {
    let tx = tx_from_row(row)?;
    let path: String = row.get(7)?;
    let op: String = row.get(8)?;
    let change = change_from_row(
        &repo.objects,
        &path,
        &op,
        (row.get(9)?, row.get(11)?),
        (row.get(10)?, row.get(12)?),
    )?;
    Ok(LoggedChange {
        id: row.get(5)?,
        tx,
        key,
        change,
    })
}
