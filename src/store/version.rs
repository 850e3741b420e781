//! What another connection committed: SQLite's `PRAGMA data_version`.

use super::Store;
use crate::error::Result;

impl Store {
    /// SQLite's `PRAGMA data_version` on this store's connection: it changes when another
    /// connection (this process or another) commits to `hist.db`, never for this one's own
    /// commits. Reading it costs no I/O beyond a check of the WAL index, so a long-lived
    /// handle asks before every read and write whether what it cached is still current.
    pub(crate) fn data_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get(0))?)
    }
}
