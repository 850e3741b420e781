//! Reading current state: each key's document (canonical text), its version, the hash of
//! its text, and the checkpoint bookkeeping a commit continues from.

use super::{Cached, Store};
use crate::error::Result;
use rusqlite::OptionalExtension;

/// What a write starts from for one key: its current document and where the key's log and
/// checkpoints stand (all zero and `None` for a key never written).
#[derive(Debug, Default)]
pub(crate) struct DocBase {
    /// The canonical text (`None`: no document).
    pub(crate) text: Option<String>,
    /// The key's version.
    pub(crate) seq: i64,
    /// The blake3 hash of `text`.
    pub(crate) hash: Option<Vec<u8>>,
    /// The version of the newest checkpoint…
    pub(crate) ckpt_seq: i64,
    /// …how many changes were recorded since…
    pub(crate) ckpt_count: i64,
    /// …and the bytes of their values.
    pub(crate) ckpt_bytes: i64,
    /// The last version sealed into a segment.
    pub(crate) sealed_seq: i64,
}

/// What a key's current document is known by without reading it.
#[derive(Debug, Default)]
pub(crate) struct LastWritten {
    /// The hash of its canonical text (`None`: no document).
    pub(crate) hash: Option<Vec<u8>>,
    /// The id of the snapshot input that wrote it, if one did.
    pub(crate) input: Option<Vec<u8>>,
}

impl Store {
    /// The canonical text of the current document under `key` as stored (personal values
    /// sealed); `None` when there is none.
    pub(crate) fn doc_text(&self, key: &str) -> Result<Option<String>> {
        let text: Option<Option<String>> = self
            .conn
            .cached_row("SELECT doc FROM doc WHERE key = ?1", [key], |r| r.get(0))
            .optional()?;
        Ok(text.flatten())
    }

    /// [`Store::doc_text`] with the hash recorded for it.
    pub(crate) fn doc_text_and_hash(&self, key: &str) -> Result<(Option<String>, Option<Vec<u8>>)> {
        let row: Option<(Option<String>, Option<Vec<u8>>)> = self
            .conn
            .cached_row("SELECT doc, hash FROM doc WHERE key = ?1", [key], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        Ok(row.unwrap_or_default())
    }

    /// Every key that currently holds a document, sorted.
    pub(crate) fn live_keys(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key FROM doc WHERE doc IS NOT NULL ORDER BY key")?;
        let keys = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(keys)
    }

    /// Every key ever written (removed documents included), sorted.
    pub(crate) fn written_keys(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key FROM doc ORDER BY key")?;
        let keys = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(keys)
    }

    /// Where a write to `key` starts.
    pub(crate) fn doc_base(&self, key: &str) -> Result<DocBase> {
        type Row = (Option<String>, i64, Option<Vec<u8>>, i64, i64, i64, i64);
        let row: Option<Row> = self
            .conn
            .cached_row(
                "SELECT doc, seq, hash, ckpt_seq, ckpt_count, ckpt_bytes, sealed_seq
                 FROM doc WHERE key = ?1",
                [key],
                |r| r.try_into(),
            )
            .optional()?;
        Ok(match row {
            Some((text, seq, hash, ckpt_seq, ckpt_count, ckpt_bytes, sealed_seq)) => DocBase {
                text,
                seq,
                hash,
                ckpt_seq,
                ckpt_count,
                ckpt_bytes,
                sealed_seq,
            },
            None => DocBase::default(),
        })
    }

    /// The hash of `key`'s current document and the input that wrote it, without reading
    /// the document.
    pub(crate) fn last_written(&self, key: &str) -> Result<LastWritten> {
        let row = self
            .conn
            .cached_row("SELECT hash, input FROM doc WHERE key = ?1", [key], |r| {
                Ok(LastWritten {
                    hash: r.get(0)?,
                    input: r.get(1)?,
                })
            })
            .optional()?;
        Ok(row.unwrap_or_default())
    }
}
