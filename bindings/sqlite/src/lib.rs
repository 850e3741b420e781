//! hist's loadable SQLite extension: registers the `hist_changes` table (hist_vtab), which
//! the `changes` view of a hist store (schema 9) reads, so that the `sqlite3` shell,
//! Python's `sqlite3` and Datasette see the whole change log, both tiers:
//!
//! ```text
//! sqlite> .load path/to/libhist_sqlite
//! sqlite> SELECT path, count(*) FROM changes WHERE key GLOB 'feed/*' GROUP BY path;
//! ```
//!
//! It registers nothing that writes. Loading it needs SQLite 3.38.0 or later.
//!
//! rusqlite's `loadable_extension` reaches SQLite through the table of functions that the
//! loading SQLite hands over (`sqlite3_api_routines`), laid out as in the SQLite its
//! bindings were made from (3.45.3), and refuses an older one. SQLite only ever appends to
//! that table, so an older SQLite's table is the beginning of the newer one: for such a
//! SQLite this extension copies the part that SQLite has into a full-size table (the rest
//! left empty: calling a function SQLite lacks is an error, never a jump to nowhere) and
//! hands rusqlite that.

#![deny(unsafe_code)]

use rusqlite::{Connection, ffi};
use std::ffi::{c_char, c_int};
use std::mem::{offset_of, size_of};
use std::panic::catch_unwind;

type Api = ffi::sqlite3_api_routines;

/// How much of the function table a SQLite has, by version: its fields before the first
/// one added after it (sqlite3ext.h marks each version's additions).
const API_PREFIX: &[(c_int, usize)] = &[
    (3_044_000, size_of::<Api>()),
    (3_043_000, offset_of!(Api, get_clientdata)),
    (3_041_000, offset_of!(Api, stmt_explain)),
    (3_040_000, offset_of!(Api, is_interrupted)),
    (3_039_000, offset_of!(Api, value_encoding)),
    (3_038_000, offset_of!(Api, deserialize)),
];

/// The oldest SQLite that has what `hist_changes` uses (`sqlite3_vtab_rhs_value`).
const OLDEST: c_int = 3_038_000;

/// The entry point SQLite derives from the file name `libhist_sqlite.so` (`sqlite3_`, the
/// name's letters after `lib`, `_init`), so `.load libhist_sqlite` needs no second
/// argument.
///
/// # Safety
///
/// Called by SQLite's extension loader, with its arguments.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sqlite3_histsqlite_init(
    db: *mut ffi::sqlite3,
    err: *mut *mut c_char,
    api: *mut Api,
) -> c_int {
    // No panic may unwind into SQLite.
    // SAFETY: the arguments are SQLite's, passed on unchanged.
    catch_unwind(|| unsafe { init(db, err, api) }).unwrap_or(ffi::SQLITE_ERROR)
}

/// Registers the table (rusqlite's `extension_init2`, with a function table of the layout
/// it expects).
#[allow(unsafe_code)]
unsafe fn init(db: *mut ffi::sqlite3, err: *mut *mut c_char, api: *mut Api) -> c_int {
    if api.is_null() {
        return ffi::SQLITE_ERROR;
    }
    // SAFETY: `api` is the loading SQLite's table; `libversion_number` has been in it
    // since the table exists (3.3), at the same place.
    let Some(version) = (unsafe { (*api).libversion_number }) else {
        return ffi::SQLITE_ERROR;
    };
    // SAFETY: a function of SQLite's, without arguments.
    let host = unsafe { version() };
    if host >= ffi::SQLITE_VERSION_NUMBER {
        // SAFETY: the table has every field rusqlite reads.
        return unsafe { Connection::extension_init2(db, err, api, register) };
    }
    let Some(&(_, prefix)) = API_PREFIX.iter().find(|(v, _)| host >= *v) else {
        let message = format!(
            "hist's extension needs SQLite {}.{}.0 or later; this is {}.{}.{}",
            OLDEST / 1_000_000,
            OLDEST / 1000 % 1000,
            host / 1_000_000,
            host / 1000 % 1000,
            host % 1000
        );
        // SAFETY: `api` and `err` are SQLite's (see `refuse`).
        unsafe { refuse(api, err, &message) };
        return ffi::SQLITE_ERROR;
    };
    // SAFETY: every field of the table is an optional function pointer, for which all
    // zeros is `None`.
    let mut full: Api = unsafe { std::mem::zeroed() };
    // SAFETY: a SQLite of version `host` has a table of at least `prefix` bytes (see
    // API_PREFIX), laid out as the beginning of `Api`; `full` is `Api`-sized and distinct.
    unsafe {
        std::ptr::copy_nonoverlapping(api.cast::<u8>(), (&raw mut full).cast::<u8>(), prefix);
    }
    // rusqlite checks the version against the one its table's layout comes from, which
    // the copy now has.
    full.libversion_number = Some(layout_version);
    // SAFETY: `full` has the layout rusqlite expects; rusqlite copies the functions out of
    // it before this returns.
    unsafe { Connection::extension_init2(db, err, &raw mut full, register) }
}

/// The version whose function table layout the extension was built against.
extern "C" fn layout_version() -> c_int {
    ffi::SQLITE_VERSION_NUMBER
}

/// Sets SQLite's error message for a failed load, allocated with SQLite's `malloc` (it
/// frees the message), before rusqlite has been initialized.
#[allow(unsafe_code)]
unsafe fn refuse(api: *mut Api, err: *mut *mut c_char, message: &str) {
    // SAFETY: `malloc` has been in the table since it exists.
    let Some(malloc) = (unsafe { (*api).malloc }) else {
        return;
    };
    if err.is_null() {
        return;
    }
    let Ok(size) = c_int::try_from(message.len() + 1) else {
        return;
    };
    // SAFETY: SQLite's malloc; it returns null or `size` bytes, which are written below
    // (the message and a terminating zero) and handed to SQLite through `err`.
    unsafe {
        let out = malloc(size).cast::<u8>();
        if out.is_null() {
            return;
        }
        std::ptr::copy_nonoverlapping(message.as_ptr(), out, message.len());
        *out.add(message.len()) = 0;
        *err = out.cast::<c_char>();
    }
}

/// What loading the extension does: registers `hist_changes`, and nothing else.
fn register(conn: Connection) -> rusqlite::Result<bool> {
    hist_vtab::register(&conn)?;
    Ok(false)
}
