//! Finding tracked files and what they hold: the tracked set, the walk, the stat cache.
//!
//! The stat cache maps a file's (size, mtime, inode) to the blake3 of the bytes it held
//! when hist last read it. An entry is trusted only when the file's mtime is older than the
//! moment the entry was written by [`RACY_NS`]: a file changed again within the same clock
//! tick as the read keeps its mtime, so such "racy" entries are re-hashed (git's rule).

use super::TrackError;
use crate::canon::ObjectId;
use crate::error::{Error, Result};
use crate::store::{CacheEntry, FileStat, IndexEntry, Store};
use std::collections::BTreeMap;
use std::fs::Metadata;
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A stat-cache entry is trusted only if the file's mtime is older than the entry by this much.
pub const RACY_NS: i64 = 2_000_000_000;

/// Names never walked into or recorded, at any depth (a `.git` file links a submodule).
const SKIPPED_NAMES: [&str; 2] = [crate::HIST_DIR, ".git"];

/// Whether `key` is `base` or inside it (`""` is the root, which holds everything).
pub(crate) fn is_under(key: &str, base: &str) -> bool {
    base.is_empty()
        || key == base
        || (key.len() > base.len() && key.starts_with(base) && key.as_bytes()[base.len()] == b'/')
}

/// The tracked set: paths the user named (`include`) and paths excluded inside them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Specs {
    entries: BTreeMap<String, bool>,
}

impl Specs {
    pub(crate) fn load(store: &Store) -> Result<Self> {
        Ok(Self {
            entries: store.track_specs()?,
        })
    }

    /// The entries, for storing.
    pub(crate) fn entries(&self) -> &BTreeMap<String, bool> {
        &self.entries
    }

    /// The most specific entry at or above `key`.
    fn decider(&self, key: &str) -> Option<(&str, bool)> {
        self.entries
            .iter()
            .filter(|(p, _)| is_under(key, p))
            .max_by_key(|(p, _)| p.len())
            .map(|(p, inc)| (p.as_str(), *inc))
    }

    /// Whether `key` is tracked by the set.
    pub(crate) fn covers(&self, key: &str) -> bool {
        self.decider(key).is_some_and(|(_, inc)| inc)
    }

    /// Whether `key`, or something under it, is tracked.
    pub(crate) fn touches(&self, key: &str) -> bool {
        self.covers(key) || self.entries.iter().any(|(p, inc)| *inc && is_under(p, key))
    }

    /// Tracks `key` and everything under it (named, it is walked even if `.histignore`
    /// lists it).
    pub(crate) fn include(&mut self, key: &str) {
        self.entries.retain(|p, _| !is_under(p, key));
        self.entries.insert(key.to_owned(), true);
    }

    /// Stops tracking `key` and everything under it.
    pub(crate) fn exclude(&mut self, key: &str) {
        self.entries.retain(|p, _| !is_under(p, key));
        if self.covers(key) {
            self.entries.insert(key.to_owned(), false);
        }
    }

    fn has_excludes(&self) -> bool {
        self.entries.values().any(|inc| !inc)
    }

    /// The included paths a walk starts from: those not already inside an included one.
    fn walk_roots(&self) -> Vec<&str> {
        self.entries
            .iter()
            .filter(|(p, inc)| {
                **inc
                    && !self
                        .entries
                        .iter()
                        .filter(|(q, _)| q.len() < p.len() && is_under(p, q))
                        .max_by_key(|(q, _)| q.len())
                        .is_some_and(|(_, inc)| *inc)
            })
            .map(|(p, _)| p.as_str())
            .collect()
    }
}

impl FileStat {
    pub(crate) fn of(meta: &Metadata) -> Self {
        let mtime_ns = meta.modified().map_or(0, system_time_ns);
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let inode = 0;
        Self {
            size: meta.len(),
            mtime_ns,
            inode,
        }
    }
}

/// Nanoseconds since the epoch (negative before it), saturating.
pub(crate) fn system_time_ns(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_nanos()).map_or(i64::MIN, |n| -n),
    }
}

impl CacheEntry {
    /// The content id, when the entry can be trusted for a file with `stat`.
    fn trusted(&self, stat: &FileStat) -> Option<ObjectId> {
        (self.stat == *stat && stat.mtime_ns < self.cached_ns.saturating_sub(RACY_NS))
            .then_some(self.object)
    }
}

/// The `.histignore` at the repository root (gitignore syntax); empty when there is none.
pub(crate) fn load_ignore(root: &Path) -> Result<ignore::gitignore::Gitignore> {
    let file = root.join(".histignore");
    if !file.is_file() {
        return Ok(ignore::gitignore::Gitignore::empty());
    }
    let mut builder = ignore::gitignore::GitignoreBuilder::new(root);
    if let Some(e) = builder.add(&file) {
        return Err(TrackError::Ignore(e.to_string()).into());
    }
    builder
        .build()
        .map_err(|e| TrackError::Ignore(e.to_string()).into())
}

/// The key of a path below `root` (`/` separators), or `None` when it is not UTF-8 text.
fn key_of(root: &Path, path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        // Fast path: the walk builds paths as `root/a/b`.
        use std::os::unix::ffi::OsStrExt;
        let (r, p) = (root.as_os_str().as_bytes(), path.as_os_str().as_bytes());
        if let Some(rest) = p.strip_prefix(r).and_then(|rest| rest.strip_prefix(b"/"))
            && !r.is_empty()
            && !r.ends_with(b"/")
            && !rest.is_empty()
            && !rest.starts_with(b"/")
            && !rest.ends_with(b"/")
            && !rest.windows(2).any(|w| w == b"//")
        {
            let key = std::str::from_utf8(rest).ok()?;
            if !key.split('/').any(|c| c == "." || c == "..") {
                return Some(key.to_owned());
            }
        }
    }
    let rel = path.strip_prefix(root).ok()?;
    let mut key = String::new();
    for c in rel.components() {
        let Component::Normal(name) = c else {
            return None;
        };
        if !key.is_empty() {
            key.push('/');
        }
        key.push_str(name.to_str()?);
    }
    Some(key)
}

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// Regular files in the tracked set, with their stat.
    pub(crate) files: Vec<(String, FileStat)>,
    /// Symbolic links and special files skipped, and names that cannot be keys.
    pub(crate) skipped: Vec<String>,
}

/// Walks the tracked set below `root` without following symbolic links, skipping `.hist/`,
/// `.git/`, excluded paths and what `.histignore` lists (the start of a walk, named by the
/// user, is never skipped as ignored). The directories below each start are walked by a few
/// threads at once, as git's preloaded index stats files in parallel.
pub(crate) fn walk(
    root: &Path,
    specs: &Specs,
    ignore: &ignore::gitignore::Gitignore,
) -> Result<Walked> {
    let mut out = Walked::default();
    let mut jobs = Vec::new();
    for start in specs.walk_roots() {
        let top = if start.is_empty() {
            root.to_path_buf()
        } else {
            root.join(start)
        };
        match std::fs::symlink_metadata(&top) {
            Ok(m) if m.file_type().is_symlink() => {
                out.skipped.push(start.to_owned());
                continue;
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&top)(e)),
        }
        walk_from(root, &top, specs, ignore, &mut out, Some(&mut jobs))?;
    }
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, 4);
    if workers == 1 || jobs.len() < 2 {
        for dir in &jobs {
            walk_from(root, dir, specs, ignore, &mut out, None)?;
        }
        out.skipped.sort();
        return Ok(out);
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let parts: Vec<Result<Walked>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut part = Walked::default();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(dir) = jobs.get(i) else { break };
                        walk_from(root, dir, specs, ignore, &mut part, None)?;
                    }
                    Ok(part)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Corrupt("a walker thread panicked".into())))
            })
            .collect()
    });
    for part in parts {
        let part = part?;
        out.files.extend(part.files);
        out.skipped.extend(part.skipped);
    }
    out.skipped.sort();
    Ok(out)
}

/// Walks below `top` (which passed the filters). With `jobs`, only its direct entries are
/// looked at and its subdirectories are handed out as jobs instead.
fn walk_from(
    root: &Path,
    top: &Path,
    specs: &Specs,
    ignore: &ignore::gitignore::Gitignore,
    out: &mut Walked,
    mut jobs: Option<&mut Vec<PathBuf>>,
) -> Result<()> {
    let mut walker = walkdir::WalkDir::new(top).follow_links(false);
    if jobs.is_some() {
        walker = walker.max_depth(1);
    }
    let filtering = specs.has_excludes() || !ignore.is_empty();
    // Excluded paths are skipped; ignored ones too, unless the user tracked them by name.
    let skipped = |key: &str, is_dir: bool| {
        filtering
            && match specs.entries.get(key) {
                Some(include) => !include,
                None => ignore.matched(key, is_dir).is_ignore(),
            }
    };
    // Directories are pruned here; files are checked below, where their key is made anyway.
    let walker = walker.into_iter().filter_entry(|e| {
        if e.depth() == 0 {
            return true;
        }
        if e.file_name()
            .to_str()
            .is_some_and(|n| SKIPPED_NAMES.contains(&n))
        {
            return false;
        }
        !e.file_type().is_dir()
            || !filtering
            || key_of(root, e.path()).is_none_or(|key| !skipped(&key, true))
    });
    for entry in walker {
        let entry = entry.map_err(|e| {
            let path = e
                .path()
                .map_or_else(|| top.to_path_buf(), Path::to_path_buf);
            Error::io(path)(std::io::Error::other(e.to_string()))
        })?;
        let ft = entry.file_type();
        if ft.is_dir() {
            if entry.depth() == 1
                && let Some(jobs) = jobs.as_deref_mut()
            {
                jobs.push(entry.into_path());
            }
            continue;
        }
        let key = key_of(root, entry.path())
            .filter(|k| crate::model::check_key(k).is_ok() && !k.is_empty());
        let Some(key) = key else {
            out.skipped
                .push(entry.path().to_string_lossy().into_owned());
            continue;
        };
        if entry.depth() > 0 && skipped(&key, false) {
            continue;
        }
        if !ft.is_file() {
            out.skipped.push(key);
            continue;
        }
        let meta = entry
            .metadata()
            .map_err(|e| Error::io(entry.path())(std::io::Error::other(e.to_string())))?;
        out.files.push((key, FileStat::of(&meta)));
    }
    Ok(())
}

/// The regular file at `key`, reached without following a symbolic link; `None` when it is
/// absent (or is no longer a regular file reachable that way).
pub(crate) fn stat_key(root: &Path, key: &str) -> Result<Option<FileStat>> {
    let mut path = root.to_path_buf();
    let parts: Vec<&str> = key.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if i + 1 == parts.len() => {
                return Ok(m.file_type().is_file().then(|| FileStat::of(&m)));
            }
            Ok(m) if m.file_type().is_dir() => {}
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path)(e)),
        }
    }
    Ok(None)
}

/// Reads the file at `key`, refusing one that was swapped (for a link or another file) since
/// it was looked at. Returns the bytes and the stat of the file that was read.
pub(crate) fn read_key(root: &Path, key: &str, stat: &FileStat) -> Result<(Vec<u8>, FileStat)> {
    use std::io::Read;
    let path = root.join(key);
    let mut file = std::fs::File::open(&path).map_err(Error::io(&path))?;
    let meta = file.metadata().map_err(Error::io(&path))?;
    let read = FileStat::of(&meta);
    if !meta.is_file() || read.inode != stat.inode {
        return Err(TrackError::Raced(key.to_owned()).into());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(Error::io(&path))?;
    Ok((bytes, read))
}

/// The state of one file against its last recorded version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileState {
    /// Recorded, and its bytes differ now.
    Modified,
    /// In a tracked directory, never recorded (or recorded as deleted).
    New,
    /// Recorded, and gone from disk.
    Deleted,
}

impl FileState {
    /// `modified`, `new`, `deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            FileState::Modified => "modified",
            FileState::New => "new",
            FileState::Deleted => "deleted",
        }
    }
}

/// One file that differs from its last recorded version.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) key: String,
    pub(crate) state: FileState,
    /// The bytes now (absent when deleted), when asked to keep them.
    pub(crate) bytes: Option<Vec<u8>>,
}

/// The result of comparing the tracked set with the disk.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub(crate) pending: Vec<Pending>,
    /// Files in scope with a recorded version that still exists on disk, unchanged or not.
    pub(crate) tracked: usize,
    pub(crate) cache_updates: Vec<(String, FileStat, ObjectId)>,
    pub(crate) hashed: usize,
    pub(crate) skipped: Vec<String>,
}

/// Compares the files in scope (and matching `filter`, when given) with their last recorded
/// versions. Bytes are read only when the stat cache cannot vouch for a file; they are kept
/// for files that differ when `keep` is set.
pub(crate) fn scan(
    root: &Path,
    store: &Store,
    specs: &Specs,
    filter: Option<&[String]>,
    keep: bool,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Scan> {
    let ignore = load_ignore(root)?;
    // The walk (mostly waiting on the file system) runs while the index is read.
    let (walked, index) = std::thread::scope(|s| {
        let walker = s.spawn(|| walk(root, specs, &ignore));
        let index = store.track_index();
        let walked = walker
            .join()
            .unwrap_or_else(|_| Err(Error::Corrupt("the walker thread panicked".into())));
        (walked, index)
    });
    let (walked, mut index) = (walked?, index?);
    let wanted = |key: &str| filter.is_none_or(|f| f.iter().any(|p| is_under(key, p)));
    // (key, stat now, index entry)
    let mut files: Vec<(String, Option<FileStat>, Option<IndexEntry>)> =
        Vec::with_capacity(walked.files.len());
    for (key, stat) in walked.files {
        if wanted(&key) {
            let entry = index.remove(&key);
            files.push((key, Some(stat), entry));
        }
    }
    // Recorded files the walk did not meet: deleted, or ignored since they were recorded.
    for (key, entry) in index {
        if specs.covers(&key) && wanted(&key) {
            let stat = stat_key(root, &key)?;
            files.push((key, stat, Some(entry)));
        }
    }
    let mut out = Scan {
        skipped: walked.skipped,
        ..Scan::default()
    };
    let total = files.len();
    for (done, (key, stat, entry)) in files.into_iter().enumerate() {
        if done % 256 == 0 {
            progress(done, total);
        }
        let Some(stat) = stat else {
            if entry.is_some() {
                out.pending.push(Pending {
                    key,
                    state: FileState::Deleted,
                    bytes: None,
                });
            }
            continue;
        };
        let Some(IndexEntry { recorded, cache }) = entry else {
            // New: its content matters only to a commit.
            let bytes = if keep {
                let (bytes, read) = read_key(root, &key, &stat)?;
                out.hashed += 1;
                out.cache_updates
                    .push((key.clone(), read, ObjectId::of(&bytes)));
                Some(bytes)
            } else {
                None
            };
            out.pending.push(Pending {
                key,
                state: FileState::New,
                bytes,
            });
            continue;
        };
        out.tracked += 1;
        let cached = cache.and_then(|c| c.trusted(&stat));
        let (object, bytes) = match cached {
            Some(id) => (id, None),
            None => {
                let (bytes, read) = read_key(root, &key, &stat)?;
                out.hashed += 1;
                let id = ObjectId::of(&bytes);
                // Rewritten even when equal: a fresh entry is no longer racy.
                out.cache_updates.push((key.clone(), read, id));
                (id, Some(bytes))
            }
        };
        if object == recorded {
            continue;
        }
        let bytes = match (keep, bytes) {
            (false, _) => None,
            (true, Some(b)) => Some(b),
            (true, None) => Some(read_key(root, &key, &stat)?.0),
        };
        out.pending.push(Pending {
            key,
            state: FileState::Modified,
            bytes,
        });
    }
    out.pending.sort_by(|a, b| a.key.cmp(&b.key));
    progress(total, total);
    Ok(out)
}

/// Lexically normalized absolute form of a path (`.` and `..` resolved without the disk).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
