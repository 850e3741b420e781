//! hist's C ABI (`libhistc`, header `include/hist.h`): a repository handle and JSON text in
//! and out, as DESIGN §7 fixes it.
//!
//! Every function that can fail returns 0 on success or the code the `hist` command exits
//! with for the same error ([`hist::ErrorClass::code`]: 1 a failure, 2 a usage error, 255 an
//! internal error), and then sets `*err` to the message (when `err` is not NULL). Every
//! string the library returns (`*out`, `*err`) is the caller's to free with [`hist_free`].
//! A panic never crosses the boundary: it is caught and returned as 255.
//!
//! Answers are the command line's `--json` output, made by [`hist::records`]: a write's
//! changes and the lists (history, blame, sql) as NDJSON, one object per line, each line
//! ending in a newline (empty when a write recorded nothing); `hist_show` a document as
//! canonical JSON text.
//!
//! A handle may be shared by several threads: calls on one handle take turns (a mutex).
//! It stays current while other processes write (the library re-reads rules, renames and
//! forgets before each call when another connection has committed).
#![allow(unsafe_code)] // this crate is the FFI boundary: every `unsafe` has its SAFETY note
#![allow(non_camel_case_types)] // C names: `hist_repo`
#![allow(clippy::too_many_arguments)] // the C signatures are DESIGN §7's
#![cfg_attr(test, allow(clippy::unwrap_used))]

use hist::canon;
use hist::model::Actor;
use hist::shred::{KeyAccess, SecretString};
use hist::time::{Timestamp, When};
use hist::{DocPath, Repo, TxOptions, Txn};
use std::ffi::{CStr, CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::Mutex;

/// An open repository. Opaque to C: made by [`hist_open`], [`hist_open_with`] or
/// [`hist_init`], released by [`hist_close`].
pub struct hist_repo {
    repo: Mutex<Repo>,
}

/// What went wrong, with the code to return.
struct Failure {
    code: c_int,
    message: String,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Self {
        Self {
            code: c_int::from(hist::ErrorClass::Usage.code()),
            message: message.into(),
        }
    }

    fn internal(message: impl Into<String>) -> Self {
        Self {
            code: c_int::from(hist::ErrorClass::Internal.code()),
            message: message.into(),
        }
    }
}

impl From<hist::Error> for Failure {
    fn from(e: hist::Error) -> Self {
        Self {
            code: c_int::from(e.class().code()),
            message: e.to_string(),
        }
    }
}

type Answer<T> = Result<T, Failure>;

/// A C string the caller frees with [`hist_free`]. Text with a NUL byte inside (which no
/// JSON answer holds: canonical JSON escapes it) has it escaped as `\0`.
fn c_string(text: String) -> *mut c_char {
    let c = CString::new(text).unwrap_or_else(|e| {
        CString::new(e.into_vec().escape_ascii().to_string()).unwrap_or_default()
    });
    c.into_raw()
}

/// Stores `value` in `*slot` when `slot` is not NULL (else frees it).
fn put(slot: *mut *mut c_char, value: *mut c_char) {
    if slot.is_null() {
        free(value);
    } else {
        // SAFETY: `slot` is not NULL, and the caller passes a pointer to a writable
        // `char *` (the header's contract for `out` and `err`).
        unsafe { *slot = value };
    }
}

fn free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: every string this library hands out comes from `CString::into_raw`
        // (`c_string`), and `hist_free`'s contract is that it is freed once.
        drop(unsafe { CString::from_raw(s) });
    }
}

/// The message of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    format!("internal error in hist ({what}); this is a bug: please report it with what was called")
}

/// Runs `f` with panics caught: its answer goes to `*out`, its failure to `*err`; returns
/// the code.
fn answer(
    out: *mut *mut c_char,
    err: *mut *mut c_char,
    f: impl FnOnce() -> Answer<Option<String>>,
) -> c_int {
    put(out, ptr::null_mut());
    put(err, ptr::null_mut());
    let result = catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|payload| Err(Failure::internal(panic_message(payload.as_ref()))));
    match result {
        Ok(text) => {
            put(out, text.map_or(ptr::null_mut(), c_string));
            0
        }
        Err(failure) => {
            put(err, c_string(failure.message));
            failure.code
        }
    }
}

/// A required string argument (`what` names it in the error).
fn text<'a>(p: *const c_char, what: &str) -> Answer<&'a str> {
    optional(p, what)?
        .ok_or_else(|| Failure::usage(format!("{what} is required (NULL was passed)")))
}

/// An optional string argument: NULL is `None`.
fn optional<'a>(p: *const c_char, what: &str) -> Answer<Option<&'a str>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: `p` is not NULL, and the caller passes a NUL-terminated string that stays
    // valid and unchanged for the call (the header's contract for every `const char *`).
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str()
        .map(Some)
        .map_err(|_| Failure::usage(format!("{what} is not UTF-8 text")))
}

/// The handle behind `r`, locked for this call.
fn lock<'a>(r: *mut hist_repo) -> Answer<std::sync::MutexGuard<'a, Repo>> {
    if r.is_null() {
        return Err(Failure::usage(
            "the repository handle is required (NULL was passed)",
        ));
    }
    // SAFETY: `r` is not NULL and came from `hist_open`/`hist_open_with`/`hist_init`;
    // the caller has not passed it to `hist_close` (the header's contract). Only a shared
    // reference is made: the mutex serializes the calls of several threads.
    let handle = unsafe { &*r };
    handle.repo.lock().map_err(|_| {
        Failure::internal(
            "this handle is unusable after an internal error in an earlier call; close it and open the repository again",
        )
    })
}

/// Runs an open (or init) with panics caught; the handle, or NULL with `*err` set.
fn open_handle(err: *mut *mut c_char, f: impl FnOnce() -> Answer<Repo>) -> *mut hist_repo {
    let mut handle = ptr::null_mut();
    answer(ptr::null_mut(), err, || {
        let repo = f()?;
        handle = Box::into_raw(Box::new(hist_repo {
            repo: Mutex::new(repo),
        }));
        Ok(None)
    });
    handle
}

/// Opens the repository whose `.hist` is in `dir` or the nearest directory above it, as
/// `hist -C dir` does. Returns NULL on failure, with `*err` set (free it with `hist_free`).
///
/// # Safety
/// `dir` is NULL or a NUL-terminated string; `err` is NULL or points to a writable
/// `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_open(dir: *const c_char, err: *mut *mut c_char) -> *mut hist_repo {
    open_handle(err, || {
        let dir = text(dir, "dir")?;
        Ok(Repo::discover(Path::new(dir))?)
    })
}

/// [`hist_open`] with options, a JSON object: `{}` (or NULL) for none. When `keys.db`'s key
/// is kept outside the repository (`hist init --identity` or `--passphrase`, `hist keys`),
/// `{"identity": "/path/to/age-identity"}` or `{"passphrase": "…"}` unlocks the personal
/// values; without it, everything else still works and reading or writing a personal value
/// fails.
///
/// # Safety
/// As [`hist_open`]; `options` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_open_with(
    dir: *const c_char,
    options: *const c_char,
    err: *mut *mut c_char,
) -> *mut hist_repo {
    open_handle(err, || {
        let dir = text(dir, "dir")?;
        let access = match optional(options, "options")? {
            Some(options) => key_access(options)?,
            None => KeyAccess::default(),
        };
        let mut repo = Repo::discover(Path::new(dir))?;
        repo.set_key_access(access);
        Ok(repo)
    })
}

/// The options of [`hist_open_with`]: what unlocks `keys.db`.
fn key_access(options: &str) -> Answer<KeyAccess> {
    let value = canon::parse_str(options)
        .map_err(|e| Failure::usage(format!("the options are not valid JSON: {e}")))?;
    let Some(members) = value.as_object() else {
        return Err(Failure::usage(
            "the options are a JSON object, such as {} or {\"identity\": \"/path/to/key\"}",
        ));
    };
    let mut access = KeyAccess::default();
    for (name, value) in members {
        if name != "identity" && name != "passphrase" {
            return Err(Failure::usage(format!(
                "unknown option {name:?}; the options are \"identity\" and \"passphrase\""
            )));
        }
        let Some(text) = value.as_str() else {
            return Err(Failure::usage(format!("option {name:?} is a string")));
        };
        match name.as_str() {
            "identity" => access.identity = Some(PathBuf::from(text)),
            _ => access.passphrase = Some(SecretString::from(text.to_owned())),
        }
    }
    access.check()?;
    Ok(access)
}

/// Creates `.hist/` in `dir` (created when missing) and opens it. Returns NULL on failure
/// (a repository already there, say), with `*err` set.
///
/// # Safety
/// As [`hist_open`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_init(dir: *const c_char, err: *mut *mut c_char) -> *mut hist_repo {
    open_handle(err, || {
        let dir = text(dir, "dir")?;
        Ok(Repo::init(Path::new(dir))?)
    })
}

/// Closes a handle (NULL is allowed). The handle is not used again.
///
/// # Safety
/// `repo` is NULL or a handle from `hist_open`, `hist_open_with` or `hist_init` that was
/// not closed yet, and no other thread is using it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_close(repo: *mut hist_repo) {
    if repo.is_null() {
        return;
    }
    // SAFETY: `repo` came from `Box::into_raw` in `open_handle` and is closed once (the
    // contract above), so the box is rebuilt and dropped exactly once.
    let handle = unsafe { Box::from_raw(repo) };
    // Dropping closes SQLite's connections; nothing there should panic, and if it does the
    // panic stays here.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(handle)));
}

/// Frees a string returned by this library (NULL is allowed).
///
/// # Safety
/// `s` is NULL or a string from `*out` or `*err` of this library, not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_free(s: *mut c_char) {
    free(s);
}

/// The transaction of a write: the actor checked first (a write without a valid one is
/// refused before anything else), the reason, and `at` (a time, not a transaction).
fn tx_options(
    actor: *const c_char,
    reason: *const c_char,
    at: *const c_char,
    kind: &str,
) -> Answer<TxOptions> {
    let actor = optional(actor, "actor")?.ok_or_else(|| {
        Failure::usage(
            "a write needs an actor, as kind:name (user:maria, job:nightly); NULL was passed",
        )
    })?;
    let actor = Actor::parse(actor).map_err(hist::Error::from)?;
    let reason = optional(reason, "reason")?.map(str::to_owned);
    let at = match optional(at, "at")?.map(When::parse).transpose() {
        Ok(None) => None,
        Ok(Some(When::At(ts))) => Some(ts),
        Ok(Some(When::Tx(_))) => {
            return Err(Failure::usage("at takes a time for a write, not @tx:N"));
        }
        Err(e) => return Err(hist::Error::from(e).into()),
    };
    // The clock is read here, as the CLI reads it: the library never does.
    let now = Timestamp::from_datetime(std::time::SystemTime::now().into());
    Ok(TxOptions::new(actor, kind, now).reason(reason).at(at))
}

/// Runs a write of `kind` through `f` and answers with what it recorded (NDJSON).
fn write(
    r: *mut hist_repo,
    opts: TxOptions,
    f: impl FnOnce(&mut Txn<'_>) -> hist::Result<()>,
) -> Answer<Option<String>> {
    let mut repo = lock(r)?;
    let mut txn = repo.begin(opts)?;
    f(&mut txn)?;
    let written = txn.commit()?;
    Ok(Some(hist::records::written(&written)))
}

/// Writes the JSON value `json` at `path` of the document `key` ("" for the whole
/// document), as `hist set --json`: `*out` is the changes recorded, NDJSON (empty when the
/// value was already there).
///
/// # Safety
/// `r` is a handle not yet closed; every `const char *` is NULL or a NUL-terminated string
/// (`reason` and `at` may be NULL); `out` and `err` are NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_set(
    r: *mut hist_repo,
    actor: *const c_char,
    reason: *const c_char,
    at: *const c_char,
    key: *const c_char,
    path: *const c_char,
    json: *const c_char,
    out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> c_int {
    answer(out, err, || {
        let opts = tx_options(actor, reason, at, "write")?;
        let (key, path, json) = (text(key, "key")?, text(path, "path")?, text(json, "json")?);
        let path = DocPath::parse(path).map_err(hist::Error::from)?;
        let value = canon::parse_str(json).map_err(|source| hist::Error::Json {
            what: "the value".to_owned(),
            source,
        })?;
        write(r, opts, |txn| txn.set(key, &path, value).map(drop))
    })
}

/// Removes the value at `path` of the document `key` ("" removes the whole document), as
/// `hist rm --json`.
///
/// # Safety
/// As [`hist_set`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_remove(
    r: *mut hist_repo,
    actor: *const c_char,
    reason: *const c_char,
    at: *const c_char,
    key: *const c_char,
    path: *const c_char,
    out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> c_int {
    answer(out, err, || {
        let opts = tx_options(actor, reason, at, "write")?;
        let (key, path) = (text(key, "key")?, text(path, "path")?);
        let path = DocPath::parse(path).map_err(hist::Error::from)?;
        write(r, opts, |txn| txn.remove(key, &path).map(drop))
    })
}

/// Records `json` as a whole snapshot of the document `key`, as `hist ingest --json`: the
/// changes from the last snapshot, NDJSON (empty when it is unchanged).
///
/// # Safety
/// As [`hist_set`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_ingest(
    r: *mut hist_repo,
    actor: *const c_char,
    reason: *const c_char,
    at: *const c_char,
    key: *const c_char,
    json: *const c_char,
    out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> c_int {
    answer(out, err, || {
        let opts = tx_options(actor, reason, at, "ingest")?;
        let (key, json) = (text(key, "key")?, text(json, "json")?);
        write(r, opts, |txn| txn.put_json(key, json.as_bytes()).map(drop))
    })
}

/// A `when` argument: NULL is now.
fn when(p: *const c_char) -> Answer<Option<When>> {
    Ok(optional(p, "when")?
        .map(When::parse)
        .transpose()
        .map_err(hist::Error::from)?)
}

/// The document `key` now (`when` NULL) or as of `when` (`"@2026-08-01"`,
/// `"@2026-08-01T16:40:00Z"`, `"@tx:42"`), as canonical JSON text (`hist show --json`,
/// without the newline). An absent document is a failure (1), as in `hist show`.
///
/// # Safety
/// `r` is a handle not yet closed; `key` and `when` are NULL or NUL-terminated strings;
/// `out` and `err` are NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_show(
    r: *mut hist_repo,
    key: *const c_char,
    when: *const c_char,
    out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> c_int {
    answer(out, err, || {
        let (key, when) = (text(key, "key")?, self::when(when)?);
        let repo = lock(r)?;
        let text = match when {
            Some(w) => repo.as_of_text(key, w)?.text,
            None => repo.current_text(key)?,
        };
        let key = key.to_owned();
        Ok(Some(text.ok_or(hist::Error::NoDocument { key, when })?))
    })
}

/// Every change that altered the value at `path` of `key`, oldest first, as
/// `hist history --json` (NDJSON).
///
/// # Safety
/// As [`hist_show`]; `path` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_history(
    r: *mut hist_repo,
    key: *const c_char,
    path: *const c_char,
    out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> c_int {
    answer(out, err, || {
        let (key, path) = (text(key, "key")?, text(path, "path")?);
        let path = DocPath::parse(path).map_err(hist::Error::from)?;
        let entries = lock(r)?.history(key, &path)?;
        let records = entries.iter().map(|e| hist::records::history_entry(key, e));
        Ok(Some(hist::records::ndjson(records)))
    })
}

/// Every leaf of `key` (now, or as of `when`) with the change that last set it, as
/// `hist blame --json` (NDJSON). An absent document is a failure (1).
///
/// # Safety
/// As [`hist_show`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_blame(
    r: *mut hist_repo,
    key: *const c_char,
    when: *const c_char,
    out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> c_int {
    answer(out, err, || {
        let (key, when) = (text(key, "key")?, self::when(when)?);
        let blame = lock(r)?.blame(key, when, None)?;
        if !blame.document {
            let key = key.to_owned();
            return Err(hist::Error::NoDocument { key, when }.into());
        }
        let records = blame
            .leaves
            .iter()
            .map(|l| hist::records::blame_leaf(key, l));
        Ok(Some(hist::records::ndjson(records)))
    })
}

/// Runs a read-only SQL query over the views `changes`, `transactions`, `current` and
/// `checks`, as `hist sql --json` (NDJSON, one object per row). A query that would write is
/// refused (1).
///
/// # Safety
/// As [`hist_show`]; `query` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hist_sql(
    r: *mut hist_repo,
    query: *const c_char,
    out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> c_int {
    answer(out, err, || {
        let query = text(query, "query")?;
        let result = lock(r)?.query_readonly(query)?;
        Ok(Some(hist::records::sql(&result)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_and_returned_as_255() {
        let (mut out, mut err) = (ptr::null_mut(), ptr::null_mut());
        let code = answer(&mut out, &mut err, || panic!("boom"));
        assert_eq!(code, 255);
        assert!(out.is_null());
        // SAFETY: `err` was set by `answer` to a string from `c_string`.
        let message = unsafe { CStr::from_ptr(err) }
            .to_string_lossy()
            .into_owned();
        assert!(
            message.contains("internal error in hist (boom)"),
            "{message}"
        );
        free(err);
    }

    /// Reads `key` through a handle opened with `options`: the document, or the code and
    /// message of the failure.
    fn show_through(dir: &Path, options: &str, key: &str) -> Result<String, (c_int, String)> {
        let taken = |s: *mut c_char| {
            // SAFETY: `s` is NULL or a string from `c_string`, freed once here.
            let text =
                (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned());
            free(s);
            text.unwrap_or_default()
        };
        let dir = CString::new(dir.to_str().unwrap()).unwrap();
        let options = CString::new(options).unwrap();
        let key = CString::new(key).unwrap();
        let (mut out, mut err) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: valid NUL-terminated strings; the handle is closed once below.
        let repo = unsafe { hist_open_with(dir.as_ptr(), options.as_ptr(), &mut err) };
        if repo.is_null() {
            return Err((1, taken(err)));
        }
        // SAFETY: `repo` is a live handle; NULL `when` means now.
        let code = unsafe { hist_show(repo, key.as_ptr(), ptr::null(), &mut out, &mut err) };
        // SAFETY: closed once, not used again.
        unsafe { hist_close(repo) };
        if code == 0 {
            Ok(taken(out))
        } else {
            Err((code, taken(err)))
        }
    }

    /// With `keys.db`'s key outside the repository, a handle opened without the identity
    /// reads everything but personal values; with `{"identity": …}` it reads those too.
    #[test]
    fn the_identity_option_unlocks_personal_values() {
        use hist::canon::Value;
        use hist::path::PathPattern;
        use hist::rules::RuleKind;
        use hist::shred::KeyProtection;
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let identity = outside.path().join("id.txt");
        let mut repo =
            Repo::init_with(dir.path(), &KeyProtection::IdentityFile(identity.clone())).unwrap();
        repo.set_key_access(KeyAccess {
            identity: Some(identity.clone()),
            passphrase: None,
        });
        let opts = |kind| {
            TxOptions::new(
                Actor::parse("user:ops").unwrap(),
                kind,
                Timestamp(1_000_000),
            )
        };
        let mut txn = repo.begin(opts("rules")).unwrap();
        let personal = RuleKind::Personal { subject_from: None };
        txn.add_rule(&PathPattern::parse("/email").unwrap(), None, &personal)
            .unwrap();
        txn.commit().unwrap();
        let mut txn = repo.begin(opts("write")).unwrap();
        let doc = canon::parse_str(r#"{"email":"ann@example.com","plan":"pro"}"#).unwrap();
        txn.put("customer/1", doc).unwrap();
        txn.put("plain", Value::from(7)).unwrap();
        txn.commit().unwrap();
        drop(repo);

        assert_eq!(show_through(dir.path(), "{}", "plain").unwrap(), "7");
        let (code, message) = show_through(dir.path(), "{}", "customer/1").unwrap_err();
        assert_eq!(code, 1, "{message}");
        assert!(message.contains("identity"), "{message}");
        let with = format!(r#"{{"identity": {:?}}}"#, identity.to_str().unwrap());
        let doc = show_through(dir.path(), &with, "customer/1").unwrap();
        assert!(doc.contains("ann@example.com"), "{doc}");
        let missing = r#"{"identity": "/no/such/identity"}"#;
        let (code, message) = show_through(dir.path(), missing, "plain").unwrap_err();
        assert_eq!(code, 1);
        assert!(message.contains("does not exist"), "{message}");
        let wrong = r#"{"passphrase": 7}"#;
        assert!(show_through(dir.path(), wrong, "plain").is_err());
    }

    #[test]
    fn a_message_with_a_nul_byte_is_escaped() {
        let s = c_string("a\0b".to_owned());
        // SAFETY: `s` comes from `c_string`.
        let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
        assert_eq!(text, "a\\x00b");
        free(s);
    }
}
