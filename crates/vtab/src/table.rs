//! The SQLite side of `hist_changes`: the table and its cursors, as rusqlite's virtual
//! table traits (which are `unsafe` to implement: SQLite holds pointers to these structs
//! as its own `sqlite3_vtab` and `sqlite3_vtab_cursor`). Every call is guarded: a panic
//! becomes an SQLite error of the query, never an unwinding across SQLite's C frames.

use crate::plan::{self, Bounds, Plan};
use crate::read::{Reader, Result, failure};
use rusqlite::Connection;
use rusqlite::types::ToSqlOutput;
use rusqlite::vtab::{
    Context, Filters, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor, sqlite3_vtab,
    sqlite3_vtab_cursor,
};
use std::borrow::Cow;
use std::ffi::{CStr, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// The table: a connection on the database that declared it, and where its objects are.
#[repr(C)]
pub(crate) struct HistChanges {
    /// SQLite's part; first, as rusqlite requires.
    base: sqlite3_vtab,
    conn: Connection,
    objects: Option<PathBuf>,
}

/// A cursor: one scan at a time (SQLite may start it again, with other values).
#[repr(C)]
pub(crate) struct Cursor<'vtab> {
    /// SQLite's part; first, as rusqlite requires.
    base: sqlite3_vtab_cursor,
    reader: Reader<'vtab>,
}

/// Runs `f`, turning a panic into an error.
fn guard<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(failure(format!("internal error: {what}")))
    })
}

/// A connection on the same database handle as the query that uses the table, so the
/// table reads what (and when) the query does: the same transaction.
#[allow(unsafe_code)]
fn same_connection(db: &mut VTabConnection) -> Result<Connection> {
    // SAFETY: the handle is that of the connection declaring this table, valid for the
    // table's whole life: SQLite disconnects the table (dropping this Connection) before it
    // closes that connection. `from_handle` makes a Connection that never closes the
    // handle. It is used only by this table's calls, which SQLite makes on the thread
    // running the query (a Connection is not Send).
    unsafe { Connection::from_handle(db.handle()) }
}

#[allow(unsafe_code)]
// SAFETY: `HistChanges` is `#[repr(C)]` with its `sqlite3_vtab` first, as the trait
// requires: SQLite and rusqlite use a pointer to it as one to an `sqlite3_vtab`.
unsafe impl<'vtab> VTab<'vtab> for HistChanges {
    type Aux = ();
    type Cursor = Cursor<'vtab>;

    fn connect(
        db: &mut VTabConnection,
        _aux: Option<&()>,
        _module_name: &[u8],
        _database_name: &[u8],
        _table_name: &[u8],
        _args: &[&[u8]],
    ) -> Result<(Cow<'static, CStr>, Self)> {
        guard(|| {
            // Reading the log has no side effect: usable from views (`changes`) even
            // when the schema is not trusted.
            db.config(VTabConfig::Innocuous)?;
            let conn = same_connection(db)?;
            // The objects are beside the database file (`.hist/hist.db`, `.hist/objects`).
            let objects = conn
                .path()
                .filter(|p| !p.is_empty())
                .and_then(|p| Path::new(p).parent())
                .map(|dir| dir.join("objects"));
            let table = HistChanges {
                base: sqlite3_vtab::default(),
                conn,
                objects,
            };
            Ok((Cow::Borrowed(plan::DECLARATION), table))
        })
    }

    fn best_index(&self, info: &mut IndexInfo) -> Result<bool> {
        guard(|| plan::best_index(info).map(|()| true))
    }

    fn open(&'vtab mut self) -> Result<Cursor<'vtab>> {
        let table: &'vtab Self = self;
        Ok(Cursor {
            base: sqlite3_vtab_cursor::default(),
            reader: Reader::new(&table.conn, table.objects.as_deref()),
        })
    }
}

#[allow(unsafe_code)]
// SAFETY: `Cursor` is `#[repr(C)]` with its `sqlite3_vtab_cursor` first, as the trait
// requires.
unsafe impl VTabCursor for Cursor<'_> {
    fn filter(&mut self, _idx_num: c_int, idx_str: Option<&str>, args: &Filters<'_>) -> Result<()> {
        guard(|| {
            let plan = idx_str
                .and_then(Plan::decode)
                .ok_or_else(|| failure("the scan's plan is not one of this table's"))?;
            let bounds = Bounds::new(&plan, args).map_err(failure)?;
            self.reader.start(plan, bounds)
        })
    }

    fn next(&mut self) -> Result<()> {
        guard(|| self.reader.next())
    }

    fn eof(&self) -> bool {
        self.reader.eof()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> Result<()> {
        guard(|| {
            let col = usize::try_from(i).map_err(|_| failure(format!("there is no column {i}")))?;
            ctx.set_result(ToSqlOutput::Borrowed(self.reader.column(col)?))
        })
    }

    fn rowid(&self) -> Result<i64> {
        guard(|| self.reader.id())
    }
}
