//! Storage: the SQLite database (schema, migrations, value encoding) and the object store.

pub(crate) mod objects;

use rusqlite::Connection;
use std::path::Path;

/// Schema migrations, applied in order by `PRAGMA user_version`.
const MIGRATIONS: &[&str] = &[
    include_str!("sql/0001_init.sql"),
    include_str!("sql/0002_track.sql"),
];

/// Values whose canonical text is longer than this are stored as objects, once.
pub(crate) const LARGE_VALUE: usize = 4096;

/// Opens (creating when `create`) the database with the settings the log needs.
pub(crate) fn open_db(path: &Path, create: bool) -> rusqlite::Result<Connection> {
    use rusqlite::OpenFlags;
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         PRAGMA synchronous = FULL;
         PRAGMA foreign_keys = ON;",
    )?;
    Ok(conn)
}

/// The schema version this build writes.
pub(crate) fn schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Brings the schema up to date. Returns the version found before.
pub(crate) fn migrate(conn: &mut Connection) -> rusqlite::Result<i64> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, sql) in MIGRATIONS
        .iter()
        .enumerate()
        .skip(usize::try_from(found).unwrap_or(0))
    {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(found)
}
