//! Reading objects: zstd-compressed files named by the blake3 hash of their uncompressed
//! bytes, at `objects/ab/cdef…` (the store writes them; see hist's `store::objects`).
//!
//! An object is zstd frames (one; or for a segment, a skippable frame with its table of
//! frames, then its header and each block as a frame), or a delta: [`DELTA_MAGIC`], the
//! 32-byte id of its base object, then a zstd frame compressed with the base's bytes as its
//! dictionary (a checkpoint compressed against an earlier one of the same document). A base
//! is never a delta itself.

use std::io;
use std::path::{Path, PathBuf};

/// Objects up to this size (as their frame states it, which hist always records) are
/// decompressed in one call, into a buffer of that size; larger ones, or frames that do
/// not state it, are streamed.
const ONE_CALL: u64 = 256 << 20;

thread_local! {
    /// One decompression context per thread, reused: making one for every object (as
    /// `zstd::stream::decode_all` does) cost more than decompressing a small checkpoint.
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Where the object named `hex` (64 lowercase hex digits) is under `dir`.
pub fn path_of(dir: &Path, hex: &str) -> PathBuf {
    let (shard, rest) = hex.split_at(hex.len().min(2));
    dir.join(shard).join(rest)
}

/// The first bytes of a delta object.
pub const DELTA_MAGIC: &[u8; 4] = b"HDL1";

/// The uncompressed bytes of the object named `hex` under `dir` (not checked against the
/// name).
pub fn read(dir: &Path, hex: &str) -> io::Result<Vec<u8>> {
    let file = std::fs::read(path_of(dir, hex))?;
    match delta_base(&file) {
        None => decompress(&file),
        Some((base, frame)) => {
            let base = decompress(&std::fs::read(path_of(dir, &name_of(base)))?)?;
            decompress_with(frame, &base)
        }
    }
}

/// The base (its blake3 hash) and the frame of a delta object's file; `None` for a plain
/// object.
pub fn delta_base(file: &[u8]) -> Option<(&[u8; 32], &[u8])> {
    let rest = file.strip_prefix(DELTA_MAGIC)?;
    let (id, frame) = rest.split_first_chunk::<32>()?;
    Some((id, frame))
}

/// An object's name: its hash in lower-case hex.
fn name_of(id: &[u8; 32]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// Decompresses a frame compressed with `dictionary` (raw content).
pub fn decompress_with(frame: &[u8], dictionary: &[u8]) -> io::Result<Vec<u8>> {
    let size = zstd::zstd_safe::get_frame_content_size(frame)
        .ok()
        .flatten()
        .filter(|&n| n <= ONE_CALL)
        .ok_or_else(|| io::Error::other("a delta object does not state its size"))?;
    with_decompressor(|d| {
        d.set_dictionary(dictionary)?;
        let out = d.decompress(frame, usize::try_from(size).unwrap_or(usize::MAX));
        // The context is the thread's: it goes back without the dictionary.
        d.set_dictionary(&[])?;
        out
    })
}

/// Decompresses an object file's bytes.
pub fn decompress(compressed: &[u8]) -> io::Result<Vec<u8>> {
    let stated = content_size(compressed);
    let Some(size) = stated.filter(|&n| n <= ONE_CALL) else {
        return zstd::stream::decode_all(compressed);
    };
    // `size` is at most ONE_CALL, which fits a usize on every platform hist builds for.
    with_decompressor(|d| d.decompress(compressed, usize::try_from(size).unwrap_or(usize::MAX)))
}

/// Runs `f` with the thread's decompression context.
fn with_decompressor<T>(
    f: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> io::Result<T>,
) -> io::Result<T> {
    DECOMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        let d = match &mut *slot {
            Some(d) => d,
            empty => empty.insert(zstd::bulk::Decompressor::new()?),
        };
        f(d)
    })
}

/// The content size of all the zstd frames in `compressed` (a segment is a frame per
/// block); `None` when a frame does not state it or is damaged.
fn content_size(mut compressed: &[u8]) -> Option<u64> {
    let mut total = 0u64;
    while !compressed.is_empty() {
        let size = zstd::zstd_safe::get_frame_content_size(compressed).ok()??;
        let frame = zstd::zstd_safe::find_frame_compressed_size(compressed).ok()?;
        total = total.checked_add(size)?;
        compressed = compressed.get(frame..)?;
    }
    Some(total)
}
