//! The log head: `.hist/HEAD` names the newest transaction a commit recorded, with its
//! chained hash, outside `hist.db`.
//!
//! The hash chain ([`crate::fsck`]) shows that no stored transaction was altered, but it
//! cannot show that the newest transactions were not removed whole: a log cut short is
//! still a valid chain. `HEAD` is written after every commit (to a temporary file renamed
//! into place, without a sync: it is evidence, not data), so `fsck` can tell when the
//! database lacks a transaction that was once committed, or holds a different one under
//! its id — a tail removed with the sqlite3 shell, or `hist.db` replaced by an older copy.
//!
//! `HEAD` is a lower bound: a crash between the commit and the rename, or two writers
//! finishing in the other order, leave it naming an earlier transaction, which the log
//! still contains, so it never raises a false alarm. Someone who edits `hist.db` and also
//! rewrites or deletes `HEAD` (or recomputes the whole chain) is not detected: that needs
//! a copy of the head kept elsewhere (`hist fsck --json` prints it).

use std::io::Write;
use std::path::Path;

/// The file name inside `.hist/`.
pub(crate) const FILE: &str = "HEAD";

/// The head a commit that rewrites the chain (`gc`) is about to record, written before its
/// SQLite commit and removed once `HEAD` names it: a crash between the two leaves `HEAD`
/// naming a transaction whose hash the rewrite changed, and this file vouches for the log.
pub(crate) const PENDING: &str = "HEAD.pending";

/// Records `id` and its chained `hash` as the log head, unless `HEAD` already names `id` or
/// a later transaction: then either another writer got there first, or the log lost its
/// tail and `HEAD` is the evidence, which a new transaction reusing an old id must not
/// erase. (After investigating, deleting `HEAD` accepts the log as it is.)
pub(crate) fn write(hist_dir: &Path, id: i64, hash: &[u8; 32]) -> std::io::Result<()> {
    if let Ok(Some((newest, _))) = read(hist_dir)
        && newest >= id
    {
        return Ok(());
    }
    write_file(hist_dir, FILE, id, hash, false)
}

/// Records the head a chain-rewriting commit is about to make ([`PENDING`]), synced, since
/// `fsck` relies on it after a crash.
pub(crate) fn write_pending(hist_dir: &Path, id: i64, hash: &[u8; 32]) -> std::io::Result<()> {
    write_file(hist_dir, PENDING, id, hash, true)
}

/// Removes [`PENDING`] once `HEAD` is written.
pub(crate) fn clear_pending(hist_dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(hist_dir.join(PENDING)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Writes `tx ID HASH` to `name` through a temporary file renamed into place, synced first
/// when `sync`.
fn write_file(
    hist_dir: &Path,
    name: &str,
    id: i64,
    hash: &[u8; 32],
    sync: bool,
) -> std::io::Result<()> {
    let text = format!("tx {id} {}\n", blake3::Hash::from_bytes(*hash).to_hex());
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-head-")
        .tempfile_in(hist_dir)?;
    tmp.write_all(text.as_bytes())?;
    if sync {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(hist_dir.join(name)).map_err(|e| e.error)?;
    Ok(())
}

/// What `HEAD` says: `None` when there is none (a repository without commits, or one
/// written before `HEAD` existed); an error text when it cannot be read.
pub(crate) fn read(hist_dir: &Path) -> Result<Option<(i64, [u8; 32])>, String> {
    read_file(hist_dir, FILE)
}

/// What [`PENDING`] says, as [`read`] does for `HEAD`.
pub(crate) fn read_pending(hist_dir: &Path) -> Result<Option<(i64, [u8; 32])>, String> {
    read_file(hist_dir, PENDING)
}

fn read_file(hist_dir: &Path, name: &str) -> Result<Option<(i64, [u8; 32])>, String> {
    let text = match std::fs::read_to_string(hist_dir.join(name)) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{name} cannot be read: {e}")),
    };
    let bad = || format!("{name} does not read as \"tx ID HASH\": {:?}", text.trim());
    let mut words = text.split_whitespace();
    let (Some("tx"), Some(id), Some(hash), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(bad());
    };
    let id = id.parse().map_err(|_| bad())?;
    let hash = blake3::Hash::from_hex(hash).map_err(|_| bad())?;
    Ok(Some((id, *hash.as_bytes())))
}
