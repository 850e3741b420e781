//! The object store: zstd-compressed blobs named by the blake3 hash of their uncompressed
//! bytes, at `objects/ab/cdef…`. Writes go to a temporary file, are synced, then renamed
//! into place, so a crash leaves either the whole object or an orphan temporary file.

use crate::canon::ObjectId;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

const LEVEL: i32 = 3;

/// Content-addressed blobs under one directory.
#[derive(Debug, Clone)]
pub(crate) struct Objects {
    dir: PathBuf,
}

impl Objects {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn path_of(&self, id: &ObjectId) -> PathBuf {
        let hex = id.to_hex();
        self.dir.join(&hex[..2]).join(&hex[2..])
    }

    /// Stores bytes; returns their id. Storing the same bytes again is a no-op.
    pub(crate) fn put(&self, bytes: &[u8]) -> io::Result<ObjectId> {
        self.put_level(bytes, LEVEL)
    }

    /// [`Objects::put`] compressed at zstd `level`.
    pub(crate) fn put_level(&self, bytes: &[u8], level: i32) -> io::Result<ObjectId> {
        let id = ObjectId::of(bytes);
        if self.path_of(&id).exists() {
            return Ok(id);
        }
        self.put_compressed(&id, &zstd::bulk::compress(bytes, level)?)?;
        Ok(id)
    }

    /// Stores the object `id` whose compressed file is `file` (unless it exists).
    pub(crate) fn put_compressed(&self, id: &ObjectId, file: &[u8]) -> io::Result<()> {
        let path = self.path_of(id);
        if path.exists() {
            return Ok(());
        }
        let shard = path.parent().unwrap_or(&self.dir);
        fs::create_dir_all(shard)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(&self.dir)?;
        tmp.write_all(file)?;
        tmp.as_file().sync_all()?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Stores the object `id` as `frame`, compressed against the object `base` (a delta:
    /// [`hist_segment::objects::DELTA_MAGIC`]).
    pub(crate) fn put_delta(&self, id: &ObjectId, base: &ObjectId, frame: &[u8]) -> io::Result<()> {
        let mut file = Vec::with_capacity(36 + frame.len());
        file.extend_from_slice(hist_segment::objects::DELTA_MAGIC);
        file.extend_from_slice(&base.0);
        file.extend_from_slice(frame);
        self.put_compressed(id, &file)
    }

    /// The base of the stored object `id`: `None` when it is not stored, `Some(None)` when
    /// it is stored whole.
    pub(crate) fn stored_base(&self, id: &ObjectId) -> io::Result<Option<Option<ObjectId>>> {
        use std::io::Read as _;
        let mut head = [0u8; 36];
        let mut file = match fs::File::open(self.path_of(id)) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let n = file.read(&mut head)?;
        Ok(Some(
            hist_segment::objects::delta_base(&head[..n]).map(|(base, _)| ObjectId(*base)),
        ))
    }

    /// Reads and decompresses an object.
    pub(crate) fn get(&self, id: &ObjectId) -> io::Result<Vec<u8>> {
        hist_segment::objects::read(&self.dir, &id.to_hex())
    }

    /// Every object file's id (files that are not named like objects are skipped).
    pub(crate) fn list(&self) -> io::Result<Vec<ObjectId>> {
        let mut ids = Vec::new();
        for entry in walkdir::WalkDir::new(&self.dir).min_depth(2).max_depth(2) {
            let entry = entry.map_err(io::Error::other)?;
            if !entry.file_type().is_file() {
                continue;
            }
            let shard = entry.path().parent().and_then(Path::file_name);
            let name = entry.file_name().to_str();
            if let (Some(shard), Some(name)) = (shard.and_then(|s| s.to_str()), name)
                && let Some(id) = ObjectId::from_hex(&format!("{shard}{name}"))
            {
                ids.push(id);
            }
        }
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_read_back_whether_or_not_their_frame_states_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let objects = Objects::new(dir.path().to_owned());
        let text = br#"{"items":[1,2,3],"name":"x"}"#.repeat(1000);
        let id = objects.put(&text).unwrap();
        assert_eq!(objects.get(&id).unwrap(), text);
        // Twice: the second read reuses the thread's decompression context.
        assert_eq!(objects.get(&id).unwrap(), text);
        // A frame written by a streaming encoder does not state its size.
        let mut streamed = zstd::stream::Encoder::new(Vec::new(), LEVEL).unwrap();
        streamed.write_all(&text).unwrap();
        let streamed = streamed.finish().unwrap();
        assert_eq!(
            zstd::zstd_safe::get_frame_content_size(&streamed)
                .ok()
                .flatten(),
            None
        );
        assert_eq!(hist_segment::objects::decompress(&streamed).unwrap(), text);
        // Damaged bytes are an error, not a panic.
        let mut damaged = fs::read(objects.path_of(&id)).unwrap();
        let last = damaged.len() - 1;
        damaged.truncate(last);
        assert!(hist_segment::objects::decompress(&damaged).is_err());
    }
}
