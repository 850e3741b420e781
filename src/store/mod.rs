//! Storage: the one owner of `hist.db` and the object store.
//!
//! Every SQL statement on the log's tables (transactions, change rows, versions, documents,
//! checkpoints, checks, rules, renames, compactions, forgets, the track index, where git
//! imports got to) is written here, behind typed functions; the modules above ask for what
//! they need ("the changes of this key between these versions", "the plan of an as-of
//! read") and never see a row.
//!
//! - [`Store`]: the connection and the object store; reads are its methods, each in the
//!   file of its concern (`changes`, `docs`, `txlog`, `records`, `files`, `imports`,
//!   `integrity`, `query`), and run inside [`Store::snapshot`] when they must see one state.
//! - [`WriteTxn`] (`write.rs`): one SQLite transaction (or savepoint, inside a batch) that
//!   commits a [`WriteSet`] in named phases: the transaction row, the change rows, current
//!   state and checkpoints, the typed [`Record`]s, the hash chain, the checks, then HEAD.
//! - One checkpoint policy ([`checkpoint`]), used by commits and by `gc`'s rebuild.
//! - The hash chain (`chain.rs`) and `.hist/HEAD` (`head.rs`) live here too: what a
//!   transaction's hash covers is defined once, next to the rows it covers.

mod chain;
mod changes;
pub(crate) mod checkpoint;
mod compact;
mod docs;
mod files;
pub(crate) mod head;
mod imports;
mod integrity;
mod listing;
pub(crate) mod objects;
pub(crate) mod query;
mod records;
mod segments;
mod stats;
mod txlog;
mod value;
mod version;
mod write;

pub(crate) use changes::{Order, Side, SideChanges, stored_path};
pub(crate) use checkpoint::Checkpoint;
pub(crate) use compact::{KeyRewrite, Merge};
pub(crate) use docs::LastWritten;
pub(crate) use files::{CacheEntry, FileStat, IndexEntry};
pub(crate) use imports::GitMark;
pub use query::{QueryResult, SqlValue};
pub(crate) use records::Record;
pub(crate) use txlog::{LogQuery, ReadPlan};
pub(crate) use value::{Stored, parse_stored};
pub(crate) use write::{DocWrite, WriteSet, WriteTxn};

use crate::error::{Error, Result};
use objects::Objects;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

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
    include_str!("sql/0009_segments.sql"),
    include_str!("sql/0010_git_import.sql"),
    include_str!("sql/0011_checkpoint_leaves.sql"),
];

/// Values whose canonical text is longer than this are stored as objects, once.
pub(crate) const LARGE_VALUE: usize = 4096;

/// The schema version this build writes.
pub(crate) fn schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// `hist.db` and the object store of one repository.
pub(crate) struct Store {
    conn: Connection,
    objects: Objects,
    /// The `.hist` directory.
    dir: PathBuf,
    /// Inside [`Store::begin_batch`]: transactions are savepoints of one SQLite transaction.
    batch: bool,
    /// Path numbers and decoded segments.
    caches: segments::SharedCaches,
    /// Segment objects replaced inside the batch, deleted when it commits.
    superseded: std::cell::RefCell<Vec<String>>,
}

impl Store {
    /// Opens (creating when `create`) the store in the `.hist` directory `dir` and brings
    /// its schema up to date.
    pub(crate) fn open(dir: &Path, create: bool) -> Result<Self> {
        let mut conn = open_db(&dir.join("hist.db"), create)?;
        let found = migrate(&mut conn)?;
        if found > schema_version() {
            return Err(Error::NewerSchema {
                found,
                supported: schema_version(),
            });
        }
        Ok(Self {
            conn,
            objects: Objects::new(dir.join("objects")),
            dir: dir.to_path_buf(),
            batch: false,
            caches: Default::default(),
            superseded: Default::default(),
        })
    }

    /// The `.hist` directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The object store.
    pub(crate) fn objects(&self) -> &Objects {
        &self.objects
    }

    /// Runs the read `f` in one SQLite read transaction, so that all its queries see one
    /// state of the store even while another process commits, and the database is locked
    /// and checked for changes once rather than once per query. Inside a transaction
    /// (a batch, a write) `f` runs in that one.
    pub(crate) fn snapshot<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        if !self.conn.is_autocommit() {
            return f();
        }
        self.conn.prepare_cached("BEGIN DEFERRED")?.execute([])?;
        let out = f();
        // Nothing was written: ending the read cannot lose anything, and its own failure
        // matters only when the read succeeded.
        let end = self.conn.prepare_cached("COMMIT")?.execute([]);
        let out = out?;
        end?;
        Ok(out)
    }

    /// True when no transaction is open on the connection.
    #[cfg(test)]
    pub(crate) fn is_autocommit(&self) -> bool {
        self.conn.is_autocommit()
    }

    /// Starts a batch: every write begun until [`Store::commit_batch`] is committed to
    /// SQLite together (one sync for many transactions).
    pub(crate) fn begin_batch(&mut self) -> Result<()> {
        if !self.batch {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            self.batch = true;
        }
        Ok(())
    }

    /// Commits the batch, then records its newest transaction in `HEAD`.
    pub(crate) fn commit_batch(&mut self) -> Result<()> {
        if self.batch {
            if let Err(e) = self.conn.execute_batch("COMMIT") {
                // Paths the batch numbered may not exist.
                self.clear_caches();
                return Err(e.into());
            }
            self.batch = false;
            self.delete_superseded(self.superseded.take());
            // A bulk import sealed (and deleted) many rows. The batch is durable: a failure
            // here only leaves the pages for later.
            let _ = self.return_free_pages();
            if let Some((id, hash)) = self.newest_hash()? {
                head::write(&self.dir, id, &hash).map_err(Error::io(&self.dir))?;
            }
        }
        Ok(())
    }

    /// Gives the database's free pages back to the file system, after a write that sealed
    /// (and so deleted) tail rows: a no-op for a store made before schema 9, without
    /// auto-vacuum.
    pub(crate) fn return_free_pages(&self) -> Result<()> {
        // Stepped to the end: the pragma frees a page per step.
        let mut vacuum = self.conn.prepare_cached("PRAGMA incremental_vacuum")?;
        let mut steps = vacuum.query([])?;
        while steps.next()?.is_some() {}
        Ok(())
    }

    /// Rolls the batch back: nothing written since [`Store::begin_batch`] stays.
    pub(crate) fn rollback_batch(&mut self) -> Result<()> {
        if self.batch {
            self.batch = false;
            // Paths the batch numbered no longer exist; the objects its segments replaced
            // are still named.
            self.clear_caches();
            self.superseded.take();
            self.conn.execute_batch("ROLLBACK")?;
        }
        Ok(())
    }

    /// Begins a write: a SQLite transaction, or a savepoint inside a batch.
    pub(crate) fn begin_write(&self) -> Result<WriteTxn<'_>> {
        WriteTxn::begin(self, self.batch)
    }

    /// Holds the write lock while `f` runs (nothing is written through the connection):
    /// no other writer can be between writing an object and committing the row that names
    /// it meanwhile.
    pub(crate) fn with_write_lock<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let out = f();
        let end = self.conn.execute_batch("ROLLBACK");
        let out = out?;
        end?;
        Ok(out)
    }

    /// Rewrites the database compactly (VACUUM, on disk rather than in memory as the
    /// store's other temporary data is) and truncates the WAL.
    pub(crate) fn vacuum(&self) -> Result<()> {
        self.conn
            .execute_batch("PRAGMA temp_store = FILE; VACUUM; PRAGMA temp_store = MEMORY;")?;
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// The size of `hist.db` and its WAL, in bytes.
    pub(crate) fn db_size(&self) -> u64 {
        ["hist.db", "hist.db-wal"]
            .iter()
            .filter_map(|name| std::fs::metadata(self.dir.join(name)).ok())
            .map(|m| m.len())
            .sum()
    }

    /// Writes a consistent copy of `hist.db` to `dest` (SQLite's backup API).
    pub(crate) fn backup_db(&self, dest: &Path) -> Result<()> {
        self.conn.backup(
            rusqlite::MAIN_DB,
            dest,
            None::<fn(rusqlite::backup::Progress)>,
        )?;
        Ok(())
    }

    /// `PRAGMA temp_store`, for tests.
    #[cfg(test)]
    pub(crate) fn temp_store(&self) -> i64 {
        self.conn
            .query_row("PRAGMA temp_store", [], |r| r.get(0))
            .unwrap_or(-1)
    }
}

/// Statements run through the connection's cache of prepared statements (writes and reads
/// repeat the same few statements; preparing each anew costs more than running it).
trait Cached {
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

/// Opens (creating when `create`) the database with the settings the log needs.
///
/// Opening an existing, current store writes nothing: it only reads the journal mode and
/// the schema version, so a reader never waits for (or blocks) a writer on open.
fn open_db(path: &Path, create: bool) -> rusqlite::Result<Connection> {
    use rusqlite::OpenFlags;
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    // The `changes` view reads `hist_changes`: without the module every statement that
    // re-reads the schema's views (a migration's `ALTER TABLE … RENAME`) would fail.
    hist_vtab::register(&conn)?;
    if create {
        // Pages freed by sealing (the tail's rows deleted) can be given back to the file
        // system ([`Store::commit_batch`]); set before the first table exists.
        conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL")?;
    }
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
    // 64 KiB, and keeps writing there. `Store::vacuum` switches back to a file.
    // A page cache of 16 MiB (SQLite's default is 2 MiB, and grows only as pages are
    // read): a large document read at the start of a write is still cached when the write
    // frees its pages, instead of being read from disk a second time.
    // Pages read through a mapping of the file (up to 256 MiB of it) instead of copied into
    // that cache: a process that reads thousands of paths once (an as-of read of a wide
    // feed: 121 pages of `path`) no longer fills fresh memory with copies of them, 1,072
    // page faults down to 942 and 3-8% of `hist show KEY @T` on the real feed.
    conn.execute_batch(
        "PRAGMA cache_size = -16384;
         PRAGMA mmap_size = 268435456;
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

/// Brings the schema up to date. Returns the version found before.
///
/// A current schema is only read. Otherwise the migrations run in one `BEGIN IMMEDIATE`
/// transaction that reads the version again first, so two processes opening an old store
/// at once apply each migration exactly once.
fn migrate(conn: &mut Connection) -> rusqlite::Result<i64> {
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

/// The error for a stored value that is not what it must be.
fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::Corrupt(what.to_string())
}
