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

    /// Tracks `key` and everything under it (named, it is walked even if an ignore file
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
/// `.git/`, excluded paths, and what ignore files list, as git does: `.gitignore` files in
/// every directory, `.git/info/exclude`, and `.histignore` files (gitignore syntax, in
/// every directory too, and winning over `.gitignore`). The repository root bounds them:
/// ignore files above it, and git's global excludes, are not read. A path the user tracked
/// by name is walked even if it is ignored. The `ignore` crate walks, on a few threads.
pub(crate) fn walk(root: &Path, specs: &Specs) -> Result<Walked> {
    // Every path the user named (sorted: a directory before what is inside it).
    let named: Vec<&str> = specs
        .entries
        .iter()
        .filter(|(_, include)| **include)
        .map(|(p, _)| p.as_str())
        .collect();
    let mut out = Walked::default();
    if named.is_empty() {
        return Ok(out);
    }
    // One walk from the root, into tracked directories and those on the way to them, so
    // that the ignore files of every directory above a tracked path apply.
    let mut reached = walk_from(root, root, specs, &named, &mut out)?;
    // A named path that an ignore file lists: walked from itself.
    for start in &named {
        if reached.contains(*start) || start.is_empty() {
            continue;
        }
        let top = root.join(start);
        match std::fs::symlink_metadata(&top) {
            Ok(m) if m.file_type().is_symlink() => out.skipped.push((*start).to_owned()),
            Ok(_) => reached.extend(walk_from(root, &top, specs, &named, &mut out)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&top)(e)),
        }
    }
    out.files.sort_by(|a, b| a.0.cmp(&b.0));
    out.files.dedup_by(|a, b| a.0 == b.0);
    out.skipped.sort();
    out.skipped.dedup();
    Ok(out)
}

/// Walks below `top` in parallel; returns which of `starts` the walk met.
fn walk_from(
    root: &Path,
    top: &Path,
    specs: &Specs,
    starts: &[&str],
    out: &mut Walked,
) -> Result<std::collections::HashSet<String>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, 4);
    let prune_root = root.to_path_buf();
    let specs = std::sync::Arc::new(specs.clone());
    let walker = ignore::WalkBuilder::new(top)
        .follow_links(false)
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_global(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .add_custom_ignore_filename(".histignore")
        .threads(threads)
        // Directories outside the tracked set, and not on the way to it, are not entered.
        .filter_entry(move |e| {
            if e.depth() == 0 {
                return true;
            }
            if e.file_name()
                .to_str()
                .is_some_and(|n| SKIPPED_NAMES.contains(&n))
            {
                return false;
            }
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            match key_of(&prune_root, e.path()) {
                Some(key) if is_dir => specs.touches(&key),
                Some(key) => specs.covers(&key),
                // Reported as skipped below.
                None => true,
            }
        })
        .build_parallel();
    let parts: std::sync::Mutex<Vec<Part>> = std::sync::Mutex::new(Vec::new());
    let failed: std::sync::Mutex<Option<Error>> = std::sync::Mutex::new(None);
    let mut builder = Visitors {
        root,
        starts,
        parts: &parts,
        failed: &failed,
    };
    walker.visit(&mut builder);
    if let Some(e) = failed
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    {
        return Err(e);
    }
    let mut reached = std::collections::HashSet::new();
    for part in parts
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    {
        out.files.extend(part.walked.files);
        out.skipped.extend(part.walked.skipped);
        reached.extend(part.reached);
    }
    Ok(reached)
}

/// What one thread of a walk found.
#[derive(Default)]
struct Part {
    walked: Walked,
    reached: Vec<String>,
}

/// Makes one [`Visitor`] per walking thread.
struct Visitors<'a> {
    root: &'a Path,
    starts: &'a [&'a str],
    parts: &'a std::sync::Mutex<Vec<Part>>,
    failed: &'a std::sync::Mutex<Option<Error>>,
}

impl<'s> ignore::ParallelVisitorBuilder<'s> for Visitors<'s> {
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 's> {
        Box::new(Visitor {
            root: self.root,
            starts: self.starts,
            part: Part::default(),
            parts: self.parts,
            failed: self.failed,
        })
    }
}

/// One walking thread: collects what it meets, hands it over when dropped.
struct Visitor<'a> {
    root: &'a Path,
    starts: &'a [&'a str],
    part: Part,
    parts: &'a std::sync::Mutex<Vec<Part>>,
    failed: &'a std::sync::Mutex<Option<Error>>,
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let part = std::mem::take(&mut self.part);
        self.parts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(part);
    }
}

impl ignore::ParallelVisitor for Visitor<'_> {
    fn visit(
        &mut self,
        entry: std::result::Result<ignore::DirEntry, ignore::Error>,
    ) -> ignore::WalkState {
        match self.entry(entry) {
            Ok(()) => ignore::WalkState::Continue,
            Err(e) => {
                self.failed
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get_or_insert(e);
                ignore::WalkState::Quit
            }
        }
    }
}

impl Visitor<'_> {
    fn entry(&mut self, entry: std::result::Result<ignore::DirEntry, ignore::Error>) -> Result<()> {
        let entry = match entry {
            Ok(entry) => entry,
            // A broken ignore file: its path and line are in the message.
            Err(e) if is_ignore_file_error(&e) => {
                return Err(TrackError::Ignore(e.to_string()).into());
            }
            Err(e) => {
                let path = io_path(&e).unwrap_or_else(|| self.root.to_path_buf());
                return Err(Error::io(path)(std::io::Error::other(e.to_string())));
            }
        };
        let out = &mut self.part.walked;
        let key = key_of(self.root, entry.path());
        let Some(ft) = entry.file_type() else {
            return Ok(());
        };
        if let Some(key) = &key
            && self.starts.contains(&key.as_str())
        {
            self.part.reached.push(key.clone());
        }
        if entry.depth() == 0 && entry.path() == self.root {
            self.part.reached.push(String::new());
        }
        if ft.is_dir() {
            return Ok(());
        }
        let key = key.filter(|k| crate::model::check_key(k).is_ok() && !k.is_empty());
        let Some(key) = key else {
            out.skipped
                .push(entry.path().to_string_lossy().into_owned());
            return Ok(());
        };
        if !ft.is_file() {
            out.skipped.push(key);
            return Ok(());
        }
        let meta = entry
            .metadata()
            .map_err(|e| Error::io(entry.path())(std::io::Error::other(e.to_string())))?;
        out.files.push((key, FileStat::of(&meta)));
        Ok(())
    }
}

/// True for an error of the `ignore` crate about an ignore file's content (a bad glob).
fn is_ignore_file_error(e: &ignore::Error) -> bool {
    match e {
        ignore::Error::Glob { .. } => true,
        ignore::Error::WithLineNumber { err, .. }
        | ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. } => is_ignore_file_error(err),
        ignore::Error::Partial(errs) => errs.iter().any(is_ignore_file_error),
        _ => false,
    }
}

/// The path an I/O error of the walk is about, if it says.
fn io_path(e: &ignore::Error) -> Option<PathBuf> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            io_path(err)
        }
        _ => None,
    }
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
    /// Its bytes differ from the last recorded version (or it is new) and do not parse in
    /// its format: it keeps its last good version until it is fixed.
    Unparsable,
}

impl FileState {
    /// `modified`, `new`, `deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            FileState::Modified => "modified",
            FileState::New => "new",
            FileState::Deleted => "deleted",
            FileState::Unparsable => "unparsable",
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

/// Which bytes a scan keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Those of modified files (`status`, to tell the ones that no longer parse); new
    /// files are not read.
    Modified,
    /// Those of every file that differs (a commit).
    All,
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
/// for files that differ as `keep` says.
pub(crate) fn scan(
    root: &Path,
    store: &Store,
    specs: &Specs,
    filter: Option<&[String]>,
    keep: Keep,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Scan> {
    // The walk (mostly waiting on the file system) runs while the index is read.
    let (walked, index) = std::thread::scope(|s| {
        let walker = s.spawn(|| walk(root, specs));
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
            let bytes = if keep == Keep::All {
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
        let bytes = match bytes {
            Some(b) => Some(b),
            None => Some(read_key(root, &key, &stat)?.0),
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
