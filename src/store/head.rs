//! The log head: `.hist/HEAD` names the newest transaction a commit recorded, with its
//! chained hash, outside `hist.db`.
//!
//! The hash chain ([`crate::fsck`]) shows that no stored transaction was altered, but it
//! cannot show that the newest transactions were not removed whole: a log cut short is
//! still a valid chain. `HEAD` is written after every commit (in place, without a sync: it
//! is evidence, not data), so `fsck` can tell when the
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
    overwrite(hist_dir, id, hash)
}

/// Writes `HEAD` in place: one write at the start of the same file. (Renaming a new file
/// into place costs an inode per commit, which took longer than the SQLite commit itself
/// on ext4: a one-field write went from 2.0× to 1.3× the time of an audit table's.) The
/// line carries a checksum, so a reader that catches it half-written reads it again, and
/// whatever a longer old line left beyond it is cut off.
fn overwrite(hist_dir: &Path, id: i64, hash: &[u8; 32]) -> std::io::Result<()> {
    let text = line(id, hash);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(hist_dir.join(FILE))?;
    file.write_all(text.as_bytes())?;
    let len = text.len() as u64;
    if file.metadata()?.len() > len {
        file.set_len(len)?;
    }
    Ok(())
}

/// `tx ID HASH CHECK`: CHECK is the start of the blake3 hash of `tx ID HASH`.
fn line(id: i64, hash: &[u8; 32]) -> String {
    let head = format!("tx {id} {}", blake3::Hash::from_bytes(*hash).to_hex());
    format!("{head} {}\n", check(&head))
}

fn check(head: &str) -> String {
    blake3::hash(head.as_bytes()).to_hex()[..16].to_owned()
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
    let text = line(id, hash);
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
    // A writer may be rewriting `HEAD` this instant: a line that does not check is read
    // again, a few times, before it counts as damaged.
    let mut tries = 0;
    loop {
        let text = match std::fs::read_to_string(hist_dir.join(name)) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{name} cannot be read: {e}")),
        };
        match parse(&text) {
            Some(head) => return Ok(Some(head)),
            None if tries < 3 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            None => {
                return Err(format!(
                    "{name} does not read as \"tx ID HASH\": {:?}",
                    text.trim()
                ));
            }
        }
    }
}

/// `tx ID HASH CHECK`, or `tx ID HASH` as written before the check existed.
fn parse(text: &str) -> Option<(i64, [u8; 32])> {
    let mut words = text.split_whitespace();
    let (Some("tx"), Some(id), Some(hash), sum, None) = (
        words.next(),
        words.next(),
        words.next(),
        words.next(),
        words.next(),
    ) else {
        return None;
    };
    if sum.is_some_and(|sum| sum != check(&format!("tx {id} {hash}"))) {
        return None;
    }
    let hash = blake3::Hash::from_hex(hash).ok()?;
    Some((id.parse().ok()?, *hash.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_reads_back_and_a_damaged_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let hash = *blake3::hash(b"tx").as_bytes();
        // A longer line from before (an old format with trailing junk) is cut off.
        std::fs::write(
            dir.path().join(FILE),
            format!("{}junk junk\n", "x".repeat(200)),
        )
        .unwrap();
        assert!(read(dir.path()).is_err());
        overwrite(dir.path(), 7, &hash).unwrap();
        assert_eq!(read(dir.path()), Ok(Some((7, hash))));
        write(dir.path(), 12, &hash).unwrap();
        write(dir.path(), 9, &hash).unwrap();
        assert_eq!(read(dir.path()), Ok(Some((12, hash))));
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert_eq!(text, line(12, &hash));
        // The line written before the check existed still reads.
        let old = format!("tx 12 {}\n", blake3::Hash::from_bytes(hash).to_hex());
        assert_eq!(parse(&old), Some((12, hash)));
        // A line caught half-rewritten: the id of one, the hash of another.
        let other = *blake3::hash(b"other").as_bytes();
        let torn = format!("{}{}", &line(13, &other)[..20], &text[20..]);
        assert_eq!(parse(&torn), None);
        assert_eq!(parse(&text.replace("tx 12", "tx 13")), None);
    }
}
