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
    let text = format!("tx {id} {}\n", blake3::Hash::from_bytes(*hash).to_hex());
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-head-")
        .tempfile_in(hist_dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.persist(hist_dir.join(FILE)).map_err(|e| e.error)?;
    Ok(())
}

/// What `HEAD` says: `None` when there is none (a repository without commits, or one
/// written before `HEAD` existed); an error text when it cannot be read.
pub(crate) fn read(hist_dir: &Path) -> Result<Option<(i64, [u8; 32])>, String> {
    let text = match std::fs::read_to_string(hist_dir.join(FILE)) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{FILE} cannot be read: {e}")),
    };
    let bad = || format!("{FILE} does not read as \"tx ID HASH\": {:?}", text.trim());
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
