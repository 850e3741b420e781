//! `hist_changes`: hist's change log as one SQLite table, over both of its tiers.
//!
//! hist keeps recent changes as rows of `change_log` (the tail) and seals older ones into
//! segments (objects indexed in `segment`; see `hist_segment`). The eponymous virtual
//! table `hist_changes(id, tx, at, actor, reason, key, path, op, old, new)` shows them as
//! one table, values as JSON text whatever their size (a large tail value is read from
//! its object). The store's `changes` view (schema 9) reads it; `hist sql` and hist's
//! loadable SQLite extension register it with [`register`]. It reads, through the same
//! database handle, what the query that uses it sees: the same transaction.
//!
//! Constraints on `key` (`=`, `IN`, `GLOB`), `tx` and `at` (`=`, `<`, `<=`, `>`, `>=`)
//! are applied while reading: a scan lists the segments they can match from the index
//! alone (by key, transaction range and time range) and decodes only those, each once
//! per cursor; transactions, keys and paths are looked up once per cursor.

#![deny(unsafe_code)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod plan;
mod read;
mod table;

use rusqlite::Connection;
use rusqlite::vtab::Module;

/// The module's name, and so the table's.
pub const NAME: &str = "hist_changes";

/// Registers the `hist_changes` module (eponymous only: the table exists in every
/// database of the connection's `main` schema without `CREATE VIRTUAL TABLE`, and no
/// other can be made).
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    const MODULE: Module<'static, table::HistChanges> = Module::eponymous_only_module();
    conn.create_module(c"hist_changes", &MODULE, None)
}

/// How many segments this thread's cursors have decoded since the thread began: what
/// tests use to check that constraints skip segments.
#[doc(hidden)]
pub fn segments_decoded() -> u64 {
    read::DECODED.with(std::cell::Cell::get)
}
