//! Checkpoints: a key's document now and then, as an object, so that no as-of read replays
//! more than a bounded amount of change whatever the length of the history.
//!
//! The one policy, used by every commit and by `gc`'s rebuild of a rewritten key
//! ([`due`]): a new checkpoint once the changes since the last one number
//! [`checkpoint_span`] of the document's size, or once the bytes of their values outweigh
//! the document (and [`CHECKPOINT_MIN_BYTES`]).
//!
//! A checkpoint is stored compressed alone, at a level that spends more time on smaller
//! documents ([`level`]), or against the key's newest full checkpoint (zstd with that
//! document as its dictionary) when that saves at least a quarter of the bytes
//! ([`worth_a_delta`]): a large document with small changes does not cost a full copy each
//! time. A delta's base is always a full checkpoint, so reading one decompresses two
//! objects at most (and a store keeps the bases it decompressed).
//!
//! A checkpoint written after a version that only replaced values also lists its leaves
//! ([`crate::leaves`]; [`Store::leaves_of`] for how they are stored): a read from it whose
//! changes only replace values patches its text instead of replaying them. On the real
//! feed that took an as-of read from 1.16-1.22× git's time to 0.87× for 0.15 MB.
//!
//! Measured on the real feed of `../shared/data` (737 versions of a 150-220 kB document,
//! 2,200 changed numbers each; `benches/cdc.sh`): at zstd level 15 instead of 9 its 105
//! checkpoints take 17% fewer bytes. Spending that room on a third more checkpoints
//! (changes weighing three quarters of the document: 134) made an as-of read only 2% faster
//! over 184 versions: a read there costs mostly what does not depend on how far it replays
//! (the thousands of paths one version touches, the block decoded up to the version).
//! Once a replay cost less per path, both thresholds at 70% (149 checkpoints) made reads
//! of 12 dates 8% faster for 8.68 MB (1.91× zstd's): not kept, as the generated feed's
//! store, at 0.98× git's after `gc`, has no room for more checkpoints. A
//! delta against a full checkpoint some versions back takes 59% of a full one's bytes or
//! more there: keeping deltas under half kept none (`.hist` 8.38 MB); under three quarters
//! keeps 67 of 105 (59-75%, median 72%; 8.02 MB) and made reads 2.5% slower over 368
//! versions read alternately. On the generated feed of
//! `benches/compare.rs` (5,000 records, 29 of them changed a poll) a delta takes 55% of a
//! full checkpoint; stored whole, its checkpoints took 190 kB more, 5% of its `.hist`.

use super::{Cached, Store, WriteTxn};
use crate::canon::ObjectId;
use crate::error::Result;
use crate::rules::KeyRules;
use rusqlite::{OptionalExtension, params};
use rustc_hash::FxHashMap;

/// A checkpoint is written once this many changes have accumulated since the last one
/// (more for large documents: see [`checkpoint_span`])…
pub const CHECKPOINT_EVERY: i64 = 64;
/// …or once the bytes of those changes outweigh the document (but at least this many bytes).
pub const CHECKPOINT_MIN_BYTES: i64 = 4096;

/// …and at most this many changes pile up between two, whatever the document's size.
pub const CHECKPOINT_MAX_SPAN: i64 = 16_384;

/// How many changes may pile up after a checkpoint of a document of `doc_bytes` canonical
/// bytes before the next one: [`CHECKPOINT_EVERY`], or one change per 8 bytes of document
/// for large documents, but never more than [`CHECKPOINT_MAX_SPAN`]. No as-of read
/// replays more than this many changes.
///
/// A feed whose every version changes thousands of fields (the CDC's vaccination figures:
/// 2,200 changes to a 170 kB document each time) would otherwise get a checkpoint per
/// version, each costing more than the version's changes do once sealed (15 kB against
/// 5 kB); now the bytes of the changes decide, every six versions or so.
pub fn checkpoint_span(doc_bytes: i64) -> i64 {
    (doc_bytes / 8).clamp(CHECKPOINT_EVERY, CHECKPOINT_MAX_SPAN)
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

/// The zstd level a checkpoint of `len` bytes is compressed at: the most a commit can spend
/// on it (level 15 takes about 30 ms for 200 kB, level 9 about 4; 9 is 20% larger).
fn level(len: usize) -> i32 {
    match len {
        0..=0x4_0000 => 15,
        0x4_0001..=0x40_0000 => 9,
        _ => 3,
    }
}

/// A stored checkpoint: its version, its object (hex; `None`: the document was absent
/// then), the base that object is compressed against, if any, and its leaves
/// ([`crate::leaves`], as stored: `None` when not indexed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Checkpoint {
    pub(crate) seq: i64,
    pub(crate) object: Option<String>,
    pub(crate) base: Option<String>,
    pub(crate) leaves: Option<Vec<u8>>,
}

impl Store {
    /// The checkpoints of `key`, oldest first.
    pub(crate) fn checkpoints(&self, key: &str) -> Result<Vec<Checkpoint>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, object, base_object, leaves FROM checkpoint WHERE key = ?1 ORDER BY seq",
        )?;
        let rows = stmt
            .query_map([key], |r| {
                Ok(Checkpoint {
                    seq: r.get(0)?,
                    object: r.get(1)?,
                    base: r.get(2)?,
                    leaves: r.get(3)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Stores `text` as a checkpoint of `key`: compressed alone, or against the key's newest
    /// full checkpoint when that saves a quarter of the bytes. Returns the object and its base.
    fn put_checkpoint(&self, key: &str, text: &str) -> Result<(ObjectId, Option<ObjectId>)> {
        let level = level(text.len());
        let id = ObjectId::of(text.as_bytes());
        if let Some(base) = self.objects.stored_base(&id).map_err(self.io_error())? {
            // Stored before (the document went back to an earlier state): as it is.
            return Ok((id, base));
        }
        let base: Option<String> = self
            .conn
            .cached_row(
                "SELECT object FROM checkpoint
                 WHERE key = ?1 AND object IS NOT NULL AND base_object IS NULL
                 ORDER BY seq DESC LIMIT 1",
                [key],
                |r| r.get(0),
            )
            .optional()?;
        let base = base.and_then(|hex| ObjectId::from_hex(&hex));
        let objects = &self.objects;
        let full = zstd::bulk::compress(text.as_bytes(), level).map_err(self.io_error())?;
        if let Some(base_id) = base
            && let Ok(base_bytes) = self.delta_base(&base_id)
        {
            let delta = zstd::bulk::Compressor::with_dictionary(level, &base_bytes)
                .and_then(|mut c| c.compress(text.as_bytes()))
                .map_err(self.io_error())?;
            if worth_a_delta(delta.len(), full.len()) {
                objects
                    .put_delta(&id, &base_id, &delta)
                    .map_err(self.io_error())?;
                return Ok((id, Some(base_id)));
            }
        }
        objects
            .put_compressed(&id, &full)
            .map_err(self.io_error())?;
        Ok((id, None))
    }

    /// The leaves of `text`, a checkpoint of `key`'s document under `rules`, whose paths
    /// have numbers (a path no change was ever recorded at has none, and no change will
    /// be replayed at it without one), as stored; `None` when there are none.
    ///
    /// Stored as [`LEAVES_ALONE`] and a zstd frame of their encoding, or as
    /// [`LEAVES_AGAINST`], the version of an earlier checkpoint of the key whose leaves
    /// are stored alone and a frame compressed against those (when that takes under half
    /// the bytes). A document's leaves change little from one checkpoint to the next, but
    /// alone they hardly compress: on the real feed of `../shared/data`, 4,200 leaves
    /// take 10.6 kB encoded and 5.8 kB compressed alone, against a few hundred bytes
    /// compressed against an earlier checkpoint's.
    pub(crate) fn leaves_of(
        &self,
        key: &str,
        seq: i64,
        text: &str,
        rules: &KeyRules,
    ) -> Result<Option<Vec<u8>>> {
        // The text is the canonical one this store writes; should it not number, the
        // checkpoint goes without leaves (its reads replay) rather than fail the write.
        let Ok(leaves) = crate::leaves::numbered(text, rules) else {
            return Ok(None);
        };
        let mut numbered = Vec::new();
        for (n, path) in leaves {
            if let Some(id) = self.path_id(&path)? {
                numbered.push((
                    n,
                    u64::try_from(id).map_err(|_| super::corrupt("a path number"))?,
                ));
            }
        }
        if numbered.is_empty() {
            return Ok(None);
        }
        let bytes = hist_segment::leafset::encode(&numbered).map_err(super::corrupt)?;
        let alone = zstd::bulk::compress(&bytes, 19).map_err(self.io_error())?;
        // The base: the newest earlier checkpoint's leaves if they are stored alone, or
        // their base.
        let newest: Option<(i64, Vec<u8>)> = self
            .conn
            .cached_row(
                "SELECT seq, leaves FROM checkpoint
                 WHERE key = ?1 AND seq < ?2 AND leaves IS NOT NULL
                 ORDER BY seq DESC LIMIT 1",
                params![key, seq],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let base = match newest {
            Some((seq, blob)) => match blob.first() {
                Some(&LEAVES_ALONE) => Some((seq, blob)),
                _ => {
                    let (seq, _) = against(&blob).ok_or_else(|| bad_leaves(key))?;
                    self.stored_leaves(key, seq)?.map(|blob| (seq, blob))
                }
            },
            None => None,
        };
        if let Some((seq, blob)) = base
            && let Some(base) = self.alone(key, &blob)?
        {
            let delta = zstd::bulk::Compressor::with_dictionary(19, &base)
                .and_then(|mut c| c.compress(&bytes))
                .map_err(self.io_error())?;
            if delta.len().saturating_mul(2) < alone.len() {
                let mut out = vec![LEAVES_AGAINST];
                out.extend_from_slice(&seq.to_le_bytes());
                out.extend_from_slice(&delta);
                return Ok(Some(out));
            }
        }
        let mut out = Vec::with_capacity(alone.len() + 1);
        out.push(LEAVES_ALONE);
        out.extend_from_slice(&alone);
        Ok(Some(out))
    }

    /// The leaves of `key`'s checkpoint at version `seq` as stored, if any.
    fn stored_leaves(&self, key: &str, seq: i64) -> Result<Option<Vec<u8>>> {
        Ok(self
            .conn
            .cached_row(
                "SELECT leaves FROM checkpoint WHERE key = ?1 AND seq = ?2",
                params![key, seq],
                |r| r.get(0),
            )
            .optional()?
            .flatten())
    }

    /// The encoding of leaves stored alone (`None`: `blob` is stored against others).
    fn alone(&self, key: &str, blob: &[u8]) -> Result<Option<Vec<u8>>> {
        match blob.split_first() {
            Some((&LEAVES_ALONE, frame)) => hist_segment::objects::decompress(frame)
                .map(Some)
                .map_err(|_| bad_leaves(key)),
            _ => Ok(None),
        }
    }

    /// The leaves of `key`'s checkpoint at version `seq`: the value number of each path
    /// number. `None`: not indexed.
    pub(crate) fn checkpoint_leaves(
        &self,
        key: &str,
        seq: i64,
    ) -> Result<Option<FxHashMap<i64, u32>>> {
        let Some(blob) = self.stored_leaves(key, seq)? else {
            return Ok(None);
        };
        let bytes = match self.alone(key, &blob)? {
            Some(bytes) => bytes,
            None => {
                let (base, frame) = against(&blob).ok_or_else(|| bad_leaves(key))?;
                let base = self
                    .stored_leaves(key, base)?
                    .and_then(|b| self.alone(key, &b).transpose())
                    .transpose()?
                    .ok_or_else(|| bad_leaves(key))?;
                hist_segment::objects::decompress_with(frame, &base).map_err(|_| bad_leaves(key))?
            }
        };
        let pairs = hist_segment::leafset::decode(&bytes).map_err(super::corrupt)?;
        let mut by_path = FxHashMap::with_capacity_and_hasher(pairs.len(), Default::default());
        for (n, path) in pairs {
            by_path.insert(
                i64::try_from(path).map_err(|_| super::corrupt("a path number"))?,
                n,
            );
        }
        Ok(Some(by_path))
    }

    fn io_error(&self) -> impl FnOnce(std::io::Error) -> crate::Error {
        crate::Error::io(self.objects.dir())
    }
}

/// The first byte of a checkpoint's leaves stored alone…
const LEAVES_ALONE: u8 = 0;
/// …or against those of another checkpoint (then its version, 8 bytes little-endian).
const LEAVES_AGAINST: u8 = 1;

/// The version of the checkpoint whose leaves `blob` is stored against, and its frame.
fn against(blob: &[u8]) -> Option<(i64, &[u8])> {
    let (&LEAVES_AGAINST, rest) = blob.split_first()? else {
        return None;
    };
    let (seq, frame) = rest.split_first_chunk::<8>()?;
    Some((i64::from_le_bytes(*seq), frame))
}

fn bad_leaves(key: &str) -> crate::Error {
    super::corrupt(format!("the leaves of a checkpoint of {key} do not decode"))
}

/// Whether a delta checkpoint of `delta` bytes is kept instead of a full one of `full`: when
/// it saves at least a quarter (see the module's notes for the two feeds measured).
fn worth_a_delta(delta: usize, full: usize) -> bool {
    delta.saturating_mul(4) < full.saturating_mul(3)
}

impl WriteTxn<'_> {
    /// Writes a checkpoint of `key` at version `seq` (of transaction `tx`): the document
    /// `text` then (`None`: absent).
    pub(crate) fn write_checkpoint(
        &self,
        key: &str,
        seq: i64,
        tx: i64,
        text: Option<&str>,
        rules: Option<&KeyRules>,
    ) -> Result<()> {
        let (object, base, leaves) = match text {
            Some(text) => {
                let store = self.store();
                let (id, base) = store.put_checkpoint(key, text)?;
                let leaves = match rules {
                    Some(rules) => store.leaves_of(key, seq, text, rules)?,
                    None => None,
                };
                (Some(id.to_hex()), base.map(|b| b.to_hex()), leaves)
            }
            None => (None, None, None),
        };
        self.insert_checkpoint(
            key,
            tx,
            &Checkpoint {
                seq,
                object,
                base,
                leaves,
            },
        )
    }

    /// Inserts (or replaces) a checkpoint row of `key` made by transaction `tx`.
    pub(crate) fn insert_checkpoint(&self, key: &str, tx: i64, c: &Checkpoint) -> Result<()> {
        self.conn().cached_exec(
            "INSERT OR REPLACE INTO checkpoint (key, seq, tx, object, base_object, leaves)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![key, c.seq, tx, c.object, c.base, c.leaves],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_weighs_count_and_bytes_against_the_document() {
        // A small document: 64 changes, or more bytes than 4 KiB.
        assert!(!due(63, 100, || 400));
        assert!(due(64, 100, || 400));
        assert!(due(1, 4097, || 400));
        assert!(!due(1, 4096, || 400));
        // A 1000-byte document: a change per 8 bytes.
        assert!(!due(124, 100, || 1000));
        assert!(due(125, 100, || 1000));
        // A 100 kB document: a change per 8 bytes, or more bytes than the document.
        assert!(!due(64, 100, || 100_000));
        assert!(!due(12_499, 100, || 100_000));
        assert!(due(12_500, 100, || 100_000));
        assert!(!due(64, 100_000, || 100_000));
        assert!(due(64, 100_001, || 100_000));
        // A 1 MB document: at most 16,384 changes.
        assert!(!due(16_383, 100, || 1 << 20));
        assert!(due(16_384, 100, || 1 << 20));
        assert!(!due(10, 1 << 20, || 1 << 20));
        assert!(due(10, (1 << 20) + 1, || 1 << 20));
        // Nothing to weigh: the document is never measured.
        assert!(!due(3, 10, || unreachable!()));
    }

    #[test]
    fn a_delta_is_kept_when_it_saves_a_quarter() {
        // The generated feed's deltas (55% of a full checkpoint) are kept, and the real
        // feed's up to three quarters; larger ones are not.
        assert!(worth_a_delta(78_056, 142_231));
        assert!(worth_a_delta(74, 100));
        assert!(!worth_a_delta(75, 100));
        assert!(!worth_a_delta(88, 100));
        assert!(!worth_a_delta(100, 100));
    }

    #[test]
    fn smaller_documents_are_compressed_harder() {
        assert_eq!(level(1), 15);
        assert_eq!(level(256 << 10), 15);
        assert_eq!(level((256 << 10) + 1), 9);
        assert_eq!(level(4 << 20), 9);
        assert_eq!(level((4 << 20) + 1), 3);
    }

    #[test]
    fn nothing_weighed_is_never_measured() {
        // Nothing to weigh: the document is never measured.
        assert!(!due(3, 10, || unreachable!()));
    }
}
