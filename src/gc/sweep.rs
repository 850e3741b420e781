//! The object sweep: deletes the objects nothing in the database references any more and
//! the temporary files interrupted writes left behind.

use super::GcOutcome;
use crate::error::{Error, Result};
use crate::store::Store;

/// Deletes objects nothing references and orphan temporary files, holding the write lock so
/// that no writer is between writing an object and committing the row that names it.
pub(super) fn sweep_objects(store: &Store, outcome: &mut GcOutcome) -> Result<()> {
    let objects = store.objects();
    let dir = objects.dir().to_path_buf();
    store.with_write_lock(|| {
        let referenced = store.referenced_objects()?;
        for id in objects.list().map_err(Error::io(&dir))? {
            if referenced.contains(&id.to_hex()) {
                continue;
            }
            let path = objects.path_of(&id);
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            std::fs::remove_file(&path).map_err(Error::io(&path))?;
            outcome.objects_removed += 1;
            outcome.object_bytes_freed += size;
            if let Some(shard) = path.parent() {
                // Only succeeds when the shard is now empty.
                let _ = std::fs::remove_dir(shard);
            }
        }
        for entry in std::fs::read_dir(&dir).map_err(Error::io(&dir))? {
            let entry = entry.map_err(Error::io(&dir))?;
            let is_temp = entry.file_name().to_string_lossy().starts_with(".tmp-");
            if is_temp && entry.file_type().is_ok_and(|t| t.is_file()) {
                let size = entry.metadata().map_or(0, |m| m.len());
                std::fs::remove_file(entry.path()).map_err(Error::io(entry.path()))?;
                outcome.temp_files_removed += 1;
                outcome.object_bytes_freed += size;
            }
        }
        Ok(())
    })
}
