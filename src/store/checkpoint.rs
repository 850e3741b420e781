//! Checkpoints: a key's document now and then, as an object, so that no as-of read replays
//! more than a bounded amount of change whatever the length of the history.
//!
//! The one policy, used by every commit and by `gc`'s rebuild of a rewritten key
//! ([`due`]): a new checkpoint once the changes since the last one number
//! [`checkpoint_span`] of the document's size, or once the bytes of their values outweigh
//! the document (and [`CHECKPOINT_MIN_BYTES`]).

use super::Store;
use crate::error::Result;

/// A checkpoint is written once this many changes have accumulated since the last one
/// (more for large documents: see [`checkpoint_span`])…
pub const CHECKPOINT_EVERY: i64 = 64;
/// …or once the bytes of those changes outweigh the document (but at least this many bytes).
pub const CHECKPOINT_MIN_BYTES: i64 = 4096;

/// How many changes may pile up after a checkpoint of a document of `doc_bytes` canonical
/// bytes before the next one: [`CHECKPOINT_EVERY`], or one change per 256 bytes of document
/// for large documents (replaying a few hundred small changes costs less than
/// decompressing and parsing one large checkpoint, and storage stays near git's). No as-of
/// read replays more than this many changes.
pub fn checkpoint_span(doc_bytes: i64) -> i64 {
    CHECKPOINT_EVERY.max(doc_bytes / 256)
}

/// Whether a checkpoint is due after `count` changes whose values weigh `bytes` since the
/// last one, the document being `doc_len()` canonical bytes long then (asked only when it
/// matters: measuring a document means writing it out).
pub(crate) fn due(count: i64, bytes: i64, doc_len: impl FnOnce() -> i64) -> bool {
    if count < CHECKPOINT_EVERY && bytes <= CHECKPOINT_MIN_BYTES {
        return false;
    }
    let len = doc_len();
    count >= checkpoint_span(len) || bytes > len.max(CHECKPOINT_MIN_BYTES)
}

impl Store {
    /// The checkpoints of `key`, oldest first: version and object id (hex; `None`: the
    /// document was absent then).
    pub(crate) fn checkpoints(&self, key: &str) -> Result<Vec<(i64, Option<String>)>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT seq, object FROM checkpoint WHERE key = ?1 ORDER BY seq")?;
        let rows = stmt
            .query_map([key], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_weighs_count_and_bytes_against_the_document() {
        // A small document: 64 changes, or more bytes than 4 KiB.
        assert!(!due(63, 100, || 1000));
        assert!(due(64, 100, || 1000));
        assert!(due(1, 4097, || 1000));
        assert!(!due(1, 4096, || 1000));
        // A 1 MB document: a change per 256 bytes, or more bytes than the document.
        assert!(!due(64, 100, || 1 << 20));
        assert!(due(4096, 100, || 1 << 20));
        assert!(!due(10, 1 << 20, || 1 << 20));
        assert!(due(10, (1 << 20) + 1, || 1 << 20));
        // Nothing to weigh: the document is never measured.
        assert!(!due(3, 10, || unreachable!()));
    }
}
