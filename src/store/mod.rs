//! Storage: the SQLite database (schema, migrations, value encoding) and the object store.

pub(crate) mod objects;

use rusqlite::Connection;
use std::path::Path;

/// Schema migrations, applied in order by `PRAGMA user_version`.
const MIGRATIONS: &[&str] = &[
    include_str!("sql/0001_init.sql"),
    include_str!("sql/0002_track.sql"),
    include_str!("sql/0003_retention.sql"),
    include_str!("sql/0004_personal.sql"),
    include_str!("sql/0005_input.sql"),
    include_str!("sql/0006_path_seq.sql"),
    include_str!("sql/0007_key_ids.sql"),
    include_str!("sql/0008_doc_rowid.sql"),
];

/// Statements run through the connection's cache of prepared statements (writes and reads
/// repeat the same few statements; preparing each anew costs more than running it).
pub(crate) trait Cached {
    /// `query_row` on a cached statement.
    fn cached_row<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T>;

    /// `execute` on a cached statement.
    fn cached_exec(&self, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize>;
}

impl Cached for Connection {
    fn cached_row<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.prepare_cached(sql)?.query_row(params, f)
    }

    fn cached_exec(&self, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }
}

/// The number `change_log` names `key` by: given to the key with its first change.
pub(crate) fn key_id(conn: &Connection, key: &str) -> rusqlite::Result<i64> {
    use rusqlite::OptionalExtension;
    let found = conn
        .cached_row("SELECT id FROM change_key WHERE key = ?1", [key], |r| {
            r.get(0)
        })
        .optional()?;
    if let Some(id) = found {
        return Ok(id);
    }
    conn.cached_exec("INSERT INTO change_key (key) VALUES (?1)", [key])?;
    Ok(conn.last_insert_rowid())
}

/// Values whose canonical text is longer than this are stored as objects, once.
pub(crate) const LARGE_VALUE: usize = 4096;

/// Opens (creating when `create`) the database with the settings the log needs.
///
/// Opening an existing, current store writes nothing: it only reads the journal mode and
/// the schema version, so a reader never waits for (or blocks) a writer on open.
pub(crate) fn open_db(path: &Path, create: bool) -> rusqlite::Result<Connection> {
    use rusqlite::OpenFlags;
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    // Plans are fixed at prepare time: without the query planner stability guarantee the
    // bundled SQLite (built with STAT4) re-prepares a statement whenever a bound value could
    // change its plan, which cost a third of the CPU of a batch of small writes.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    // Every statement a write repeats stays prepared.
    conn.set_prepared_statement_cache_capacity(64);
    // Temporary data in memory: above all the undo record of each savepoint (a
    // transaction inside a batch), which SQLite otherwise writes to a file once it passes
    // 64 KiB, and keeps writing there. gc's VACUUM switches back to a file (`gc.rs`).
    // A page cache of 16 MiB (SQLite's default is 2 MiB, and grows only as pages are
    // read): a large document read at the start of a write is still cached when the write
    // frees its pages, instead of being read from disk a second time.
    conn.execute_batch(
        "PRAGMA cache_size = -16384;
         PRAGMA synchronous = FULL;
         PRAGMA journal_size_limit = 8388608;
         PRAGMA foreign_keys = ON;
         PRAGMA temp_store = MEMORY;",
    )?;
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))?;
    }
    Ok(conn)
}

/// The schema version this build writes.
pub(crate) fn schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Brings the schema up to date. Returns the version found before.
///
/// A current schema is only read. Otherwise the migrations run in one `BEGIN IMMEDIATE`
/// transaction that reads the version again first, so two processes opening an old store
/// at once apply each migration exactly once.
pub(crate) fn migrate(conn: &mut Connection) -> rusqlite::Result<i64> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found >= schema_version() {
        return Ok(found);
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let found: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, sql) in MIGRATIONS
        .iter()
        .enumerate()
        .skip(usize::try_from(found).unwrap_or(0))
    {
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
    }
    tx.commit()?;
    Ok(found)
}
