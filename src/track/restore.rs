//! Versions of tracked files and writing them back, byte for byte.

use super::TrackError;
use crate::canon::ObjectId;
use crate::error::{Error, Result};
use crate::repo::Repo;
use crate::time::When;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One recorded version of a tracked file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileVersion {
    /// The file's key.
    pub key: String,
    /// The transaction that recorded it.
    pub tx: i64,
    /// The object holding its raw bytes (`None`: the file was deleted).
    pub object: Option<ObjectId>,
    /// Its size in bytes (`None`: deleted).
    pub size: Option<u64>,
}

/// What [`Repo::restore_file`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    /// The file written.
    pub path: PathBuf,
    /// The transaction whose version it holds.
    pub tx: i64,
    /// Bytes.
    pub size: usize,
    /// The file already held exactly these bytes (nothing was written).
    pub unchanged: bool,
}

fn to_version(row: (String, i64, Option<String>, Option<i64>)) -> Result<FileVersion> {
    let (key, tx, object, size) = row;
    let object = object
        .map(|hex| {
            ObjectId::from_hex(&hex)
                .ok_or_else(|| Error::Corrupt(format!("file version object id {hex:?}")))
        })
        .transpose()?;
    Ok(FileVersion {
        key,
        tx,
        object,
        size: size.map(|s| u64::try_from(s).unwrap_or(0)),
    })
}

/// Checks that a key names a file inside the root: a relative path of plain names.
pub fn check_file_key(key: &str) -> Result<(), TrackError> {
    let bad = key.is_empty()
        || key.starts_with('/')
        || key.chars().any(char::is_control)
        || key
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
        || key.split('/').next() == Some(crate::HIST_DIR)
        || key.split('/').any(|p| p == ".git");
    if bad {
        Err(TrackError::UnsafeKey(key.to_owned()))
    } else {
        Ok(())
    }
}

impl Repo {
    /// Every recorded version of the file `key`, oldest first (deletions included).
    pub fn file_versions(&self, key: &str) -> Result<Vec<FileVersion>> {
        self.store
            .file_versions(key)?
            .into_iter()
            .map(to_version)
            .collect()
    }

    /// The version of the file `key` as of `when` (default: the newest), or `None` when it was
    /// not recorded by then. A deletion is a version without an object.
    pub fn file_version(&self, key: &str, when: Option<When>) -> Result<Option<FileVersion>> {
        let bound = match when {
            Some(w) => match self.resolve(w)? {
                Some(tx) => tx,
                None => return Ok(None),
            },
            None => i64::MAX,
        };
        self.store
            .file_version_at(key, bound)?
            .map(to_version)
            .transpose()
    }

    /// The raw bytes of the file `key` as of `when`, with the version they come from.
    pub fn file_bytes(&self, key: &str, when: Option<When>) -> Result<(FileVersion, Vec<u8>)> {
        let then = when.map_or_else(|| "now".to_owned(), |w| format!("at {w}"));
        let version = self.file_version(key, when)?;
        let Some((version, id)) = version.and_then(|v| v.object.map(|id| (v, id))) else {
            return Err(TrackError::NoVersion {
                key: key.to_owned(),
                when: then,
            }
            .into());
        };
        let Some(bytes) = self.unseal_raw(self.raw_object(&id)?)? else {
            return Err(TrackError::Forgotten(key.to_owned()).into());
        };
        Ok((version, bytes))
    }

    /// Writes the file `key` back as of `when`, byte for byte: to its place in the repository,
    /// or to `out` (an absolute path). Never writes outside the root unless asked to with
    /// `out`; refuses to overwrite a file with uncommitted changes (or, with `out`, a different
    /// file) unless `force`.
    pub fn restore_file(
        &self,
        key: &str,
        when: Option<When>,
        out: Option<&Path>,
        force: bool,
    ) -> Result<Restored> {
        check_file_key(key)?;
        let (version, bytes) = self.file_bytes(key, when)?;
        let path = match out {
            Some(p) => p.to_path_buf(),
            None => self.in_place_target(key)?,
        };
        let existing = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => Some(m),
            Ok(m) if m.file_type().is_symlink() => {
                return Err(TrackError::Symlink(path.display().to_string()).into());
            }
            Ok(_) => return Err(TrackError::NotAFile(path.display().to_string()).into()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(&path)(e)),
        };
        let restored = |unchanged| Restored {
            path: path.clone(),
            tx: version.tx,
            size: bytes.len(),
            unchanged,
        };
        if let Some(meta) = &existing {
            let current = std::fs::read(&path).map_err(Error::io(&path))?;
            if current == bytes {
                return Ok(restored(true));
            }
            if !force {
                match out {
                    Some(_) => return Err(TrackError::Exists(path.display().to_string()).into()),
                    None => {
                        let live = self.store.recorded_object(key)?;
                        if live != Some(ObjectId::of(&current)) {
                            return Err(TrackError::Uncommitted(key.to_owned()).into());
                        }
                    }
                }
            }
            write_atomically(&path, &bytes, Some(meta.permissions()))?;
        } else {
            write_atomically(&path, &bytes, None)?;
        }
        Ok(restored(false))
    }

    /// The place of `key` under the root, with missing directories created and no symbolic
    /// link on the way.
    fn in_place_target(&self, key: &str) -> Result<PathBuf> {
        let parts: Vec<&str> = key.split('/').collect();
        let mut at = self.root().to_path_buf();
        for (i, part) in parts.iter().enumerate() {
            at.push(part);
            if i + 1 == parts.len() {
                break;
            }
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(TrackError::Symlink(parts[..=i].join("/")).into());
                }
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(TrackError::NotAFile(parts[..=i].join("/")).into()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::fs::create_dir(&at).map_err(Error::io(&at))?;
                }
                Err(e) => return Err(Error::io(&at)(e)),
            }
        }
        Ok(at)
    }
}

/// Writes a file through a temporary file in the same directory, synced, then renamed into
/// place (a crash leaves the old file or the new one). Keeps `permissions` when given.
fn write_atomically(
    path: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.hist-{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(Error::io(path))
}
