//! Reading objects: zstd-compressed files named by the blake3 hash of their uncompressed
//! bytes, at `objects/ab/cdef…` (the store writes them; see hist's `store::objects`).

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

/// The uncompressed bytes of the object named `hex` under `dir` (not checked against the
/// name).
pub fn read(dir: &Path, hex: &str) -> io::Result<Vec<u8>> {
    decompress(&std::fs::read(path_of(dir, hex))?)
}

/// Decompresses an object file's bytes.
pub fn decompress(compressed: &[u8]) -> io::Result<Vec<u8>> {
    let stated = zstd::zstd_safe::get_frame_content_size(compressed)
        .ok()
        .flatten();
    let Some(size) = stated.filter(|&n| n <= ONE_CALL) else {
        return zstd::stream::decode_all(compressed);
    };
    DECOMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        let d = match &mut *slot {
            Some(d) => d,
            empty => empty.insert(zstd::bulk::Decompressor::new()?),
        };
        // `size` is at most ONE_CALL, which fits a usize on every platform hist builds for.
        d.decompress(compressed, usize::try_from(size).unwrap_or(usize::MAX))
    })
}
