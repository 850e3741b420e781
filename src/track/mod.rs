//! Versioning a directory of files: `track`, `status`, `commit`, `untrack`, `restore`.
//!
//! Terminology:
//! - **Key** of a file: its path relative to the repository root with `/` separators, whatever
//!   directory a command runs from (`config/app.toml`).
//! - **Tracked set**: the files and directories named with [`Repo::track`], minus those named
//!   with [`Repo::untrack`] inside them. Inside it, `.hist/` and `.git/` are never walked,
//!   symbolic links are neither followed nor recorded, and what the `.histignore` at the root
//!   lists (gitignore syntax) is skipped.
//! - **Version**: what a file held at one transaction. Its parsed content is an ordinary
//!   document under its key (so `history`, `diff`, `blame` and as-of reads work per field; see
//!   [`formats`] for how each format is read), and its raw bytes are kept as an object so
//!   [`Repo::restore_file`] writes it back byte for byte. A deleted file removes the document.
//! - **Stat cache**: size, mtime and inode of each file when hist last read it, with the hash
//!   of its bytes, so `status` and `commit` read only files whose stat changed; an entry
//!   written less than [`RACY_NS`] after the file's mtime is not trusted ("racy", as in git).
//!
//! Every file is read and parsed before anything is written. A file that does not parse
//! never blocks the others: it is left out of the transaction (with its error in
//! [`Recorded::unparsable`]) and keeps its last good version, so its field history and blame
//! go on when it is fixed; `status` lists it as [`FileState::Unparsable`] until then (a new
//! file is listed as new: `status` does not read new files, as git does not).

pub mod formats;
mod restore;
mod scan;

pub use crate::error::{FileParseError, TrackError};
pub use formats::Format;
pub use restore::{FileVersion, Restored, check_file_key};
pub use scan::{FileState, RACY_NS};

use crate::canon::ObjectId;
use crate::error::{Error, Result};
use crate::model::TxInfo;
use crate::path::DocPath;
use crate::repo::{Repo, TxOptions};
use crate::store::objects::Objects;
use crate::txn::PutOutcome;
use scan::{Specs, is_under, normalize, system_time_ns};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::SystemTime;

/// Writers storing objects at once: each object is synced before it is renamed into place, and
/// concurrent syncs share the file system's journal commits, so a large tree is stored many
/// times faster than one object after another.
const WRITERS: usize = 8;

/// Stores the bytes of every pending file as an object (idempotent); returns each file's
/// object id and size, in order (`None` for deleted files).
///
/// Files under a personal rule (`sealed`) are not stored here: their bytes are sealed with
/// their subject's key inside the transaction; their id is the content's, for the index.
fn store_objects(
    store: &Objects,
    pending: &[scan::Pending],
    sealed: &[bool],
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<Option<(ObjectId, usize)>>> {
    let put = |i: usize, p: &scan::Pending| -> Result<Option<(ObjectId, usize)>> {
        match &p.bytes {
            Some(bytes) if sealed.get(i).copied().unwrap_or(false) => {
                Ok(Some((ObjectId::of(bytes), bytes.len())))
            }
            Some(bytes) => {
                let id = store.put(bytes).map_err(Error::io(store.dir()))?;
                Ok(Some((id, bytes.len())))
            }
            None => Ok(None),
        }
    };
    if pending.len() < 2 * WRITERS {
        return pending.iter().enumerate().map(|(i, p)| put(i, p)).collect();
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Result<Option<(ObjectId, usize)>>)>();
    std::thread::scope(|s| {
        for _ in 0..WRITERS {
            let tx = tx.clone();
            let (next, put) = (&next, &put);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(p) = pending.get(i) else { break };
                    let failed = {
                        let r = put(i, p);
                        let failed = r.is_err();
                        if tx.send((i, r)).is_err() {
                            break;
                        }
                        failed
                    };
                    if failed {
                        // Stop handing out work; the others finish what they hold.
                        next.store(pending.len(), Ordering::Relaxed);
                    }
                }
            });
        }
        drop(tx);
        let mut out = vec![None; pending.len()];
        let mut first_error = None;
        for (done, (i, r)) in rx.iter().enumerate() {
            match r {
                Ok(v) => out[i] = v,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
            if done % 64 == 0 {
                progress(done);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}

/// Which part of a long operation is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Comparing files with their last versions (reading those whose stat changed).
    Scanning,
    /// Parsing and storing the files that changed.
    Recording,
}

/// Progress of a long operation, for a progress bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// What runs.
    pub phase: Phase,
    /// Files done.
    pub done: usize,
    /// Files in all.
    pub total: usize,
}

/// One file that differs from its last recorded version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStatus {
    /// The file's key.
    pub key: String,
    /// How it differs.
    pub state: FileState,
    /// Why it is [`FileState::Unparsable`].
    pub error: Option<FileParseError>,
}

/// What [`Repo::status`] found.
#[derive(Clone, Debug, Default)]
pub struct Status {
    /// Files that differ from their last version, sorted by key.
    pub files: Vec<FileStatus>,
    /// Tracked files present on disk (changed or not).
    pub tracked: usize,
    /// Files read and hashed because the stat cache could not vouch for them.
    pub hashed: usize,
    /// Links, special files and unusable names skipped by the walk.
    pub skipped: Vec<String>,
}

/// One file recorded by [`Repo::track`] or [`Repo::commit_files`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedFile {
    /// The file's key.
    pub key: String,
    /// What happened to it.
    pub state: FileState,
    /// Field-level changes recorded (0: only its bytes changed, e.g. a comment).
    pub changes: usize,
}

/// What [`Repo::track`] or [`Repo::commit_files`] recorded.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// The transaction (`None`: nothing had changed, nothing was recorded).
    pub tx: Option<TxInfo>,
    /// The files recorded, sorted by key.
    pub files: Vec<RecordedFile>,
    /// Tracked files present on disk after the command (changed or not).
    pub tracked: usize,
    /// Files read and hashed because the stat cache could not vouch for them.
    pub hashed: usize,
    /// Files parsed (only files that changed are).
    pub parsed: usize,
    /// Links, special files and unusable names skipped by the walk.
    pub skipped: Vec<String>,
    /// Warnings from diffing (arrays treated as opaque).
    pub warnings: Vec<String>,
    /// Files that changed but do not parse: not recorded (they keep their last version).
    pub unparsable: Vec<FileParseError>,
}

/// What [`Repo::untrack`] did.
#[derive(Clone, Debug, Default)]
pub struct Untracked {
    /// Recorded files that are no longer tracked, sorted.
    pub keys: Vec<String>,
}

impl Repo {
    /// The key of a path given on the command line (relative to `cwd`): its path relative to
    /// the root, refused when outside the root, inside `.hist/` or `.git/`, or through a
    /// symbolic link. `""` is the root itself.
    pub fn key_for_path(&self, cwd: &Path, path: &Path) -> Result<String> {
        let shown = path.display().to_string();
        let abs = normalize(&cwd.join(path));
        let root = normalize(self.root());
        let rel = abs
            .strip_prefix(&root)
            .map_err(|_| TrackError::OutsideRoot {
                path: shown.clone(),
                root: root.display().to_string(),
            })?;
        let mut parts = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(name) => match name.to_str() {
                    Some(n) if !n.chars().any(char::is_control) => parts.push(n),
                    _ => return Err(TrackError::BadName(shown).into()),
                },
                _ => return Err(TrackError::UnsafeKey(shown).into()),
            }
        }
        if parts.first() == Some(&crate::HIST_DIR) || parts.contains(&".git") {
            return Err(TrackError::Reserved(shown).into());
        }
        let mut at = root.clone();
        for (i, part) in parts.iter().enumerate() {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(TrackError::Symlink(parts[..=i].join("/")).into());
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => return Err(Error::io(&at)(e)),
            }
        }
        Ok(parts.join("/"))
    }

    /// Adds files and directories (paths relative to `cwd`) to the tracked set and records
    /// every file under them that is new or changed, in one transaction of kind `track`.
    pub fn track(
        &mut self,
        paths: &[&Path],
        cwd: &Path,
        opts: TxOptions,
        fs_now: SystemTime,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Recorded> {
        let mut specs = Specs::load(&self.store)?;
        let mut keys = Vec::new();
        for path in paths {
            let key = self.key_for_path(cwd, path)?;
            let at = if key.is_empty() {
                self.root().to_path_buf()
            } else {
                self.root().join(&key)
            };
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.is_dir() || m.is_file() => {}
                Ok(_) => return Err(TrackError::NotAFile(path.display().to_string()).into()),
                Err(_) => return Err(TrackError::NotFound(path.display().to_string()).into()),
            }
            specs.include(&key);
            keys.push(key);
        }
        self.record(&specs, true, Some(&keys), opts, fs_now, progress)
    }

    /// Records every tracked file that changed, appeared in a tracked directory or was
    /// deleted (only those under `paths`, when given) in one transaction of kind `track`.
    pub fn commit_files(
        &mut self,
        paths: &[&Path],
        cwd: &Path,
        opts: TxOptions,
        fs_now: SystemTime,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Recorded> {
        let specs = Specs::load(&self.store)?;
        let mut keys = Vec::new();
        for path in paths {
            let key = self.key_for_path(cwd, path)?;
            if !specs.touches(&key) {
                return Err(TrackError::NotTracked(path.display().to_string()).into());
            }
            keys.push(key);
        }
        let filter = (!paths.is_empty()).then_some(keys.as_slice());
        self.record(&specs, false, filter, opts, fs_now, progress)
    }

    /// Compares the tracked files with their last recorded versions, reading only files whose
    /// stat changed. Refreshes the stat cache when it can (a failure to do so is ignored: the
    /// cache only saves work).
    pub fn status(&self, fs_now: SystemTime) -> Result<Status> {
        let specs = Specs::load(&self.store)?;
        // The bytes of modified files are kept, to tell those that no longer parse.
        let scan = scan::scan(
            self.root(),
            &self.store,
            &specs,
            None,
            scan::Keep::Modified,
            &mut |_, _| {},
        )?;
        if !scan.cache_updates.is_empty() {
            let _ = self
                .store
                .save_stat_cache_now(&scan.cache_updates, system_time_ns(fs_now));
        }
        Ok(Status {
            files: scan
                .pending
                .into_iter()
                .map(|p| {
                    let error = p
                        .bytes
                        .as_deref()
                        .and_then(|b| formats::parse_file(&p.key, b).err());
                    FileStatus {
                        state: if error.is_some() {
                            FileState::Unparsable
                        } else {
                            p.state
                        },
                        key: p.key,
                        error,
                    }
                })
                .collect(),
            tracked: scan.tracked,
            hashed: scan.hashed,
            skipped: scan.skipped,
        })
    }

    /// Removes files and directories (paths relative to `cwd`) from the tracked set. Their
    /// history and documents stay; the files on disk are not touched.
    pub fn untrack(&mut self, paths: &[&Path], cwd: &Path) -> Result<Untracked> {
        let mut specs = Specs::load(&self.store)?;
        let live = self.store.track_index()?;
        let mut keys = Vec::new();
        for path in paths {
            let key = self.key_for_path(cwd, path)?;
            if !specs.touches(&key) {
                return Err(TrackError::NotTracked(path.display().to_string()).into());
            }
            keys.extend(
                live.keys()
                    .filter(|k| is_under(k, &key) && specs.covers(k))
                    .cloned(),
            );
            specs.exclude(&key);
        }
        self.store.save_track_specs_now(specs.entries())?;
        keys.sort();
        keys.dedup();
        Ok(Untracked { keys })
    }

    fn record(
        &mut self,
        specs: &Specs,
        specs_changed: bool,
        filter: Option<&[String]>,
        opts: TxOptions,
        fs_now: SystemTime,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Recorded> {
        let fs_now_ns = system_time_ns(fs_now);
        let mut scan = scan::scan(
            self.root(),
            &self.store,
            specs,
            filter,
            scan::Keep::All,
            &mut |done, total| {
                progress(Progress {
                    phase: Phase::Scanning,
                    done,
                    total,
                });
            },
        )?;
        let mut out = Recorded {
            tracked: scan.tracked,
            hashed: scan.hashed,
            skipped: std::mem::take(&mut scan.skipped),
            ..Recorded::default()
        };
        // Parse everything before writing anything; a file that does not parse is left out
        // (it keeps its last version) and reported.
        let mut docs = Vec::with_capacity(scan.pending.len());
        let mut pending = Vec::with_capacity(scan.pending.len());
        for p in std::mem::take(&mut scan.pending) {
            match &p.bytes {
                Some(bytes) => {
                    out.parsed += 1;
                    match formats::parse_file(&p.key, bytes) {
                        Ok(doc) => docs.push(Some(doc)),
                        Err(e) => {
                            out.unparsable.push(e);
                            continue;
                        }
                    }
                }
                None => docs.push(None),
            }
            pending.push(p);
        }
        scan.pending = pending;
        // Raw bytes land as objects before the rows that name them.
        let total = scan.pending.len();
        let sealed: Vec<bool> = scan
            .pending
            .iter()
            .map(|p| !crate::shred::personal_rules(&self.rules(), &p.key).is_empty())
            .collect();
        let objects = store_objects(self.store.objects(), &scan.pending, &sealed, &mut |done| {
            progress(Progress {
                phase: Phase::Recording,
                done,
                total,
            });
        })?;
        if scan.pending.is_empty() && !specs_changed && scan.cache_updates.is_empty() {
            return Ok(out);
        }
        let mut txn = self.begin(opts)?;
        let tx_id = txn.info().id;
        for (((p, doc), object), personal) in
            scan.pending.iter().zip(docs).zip(objects).zip(&sealed)
        {
            // The raw bytes of a file with personal paths are kept sealed with the
            // subject's key, so `hist forget` reaches them too.
            let stored = match (&p.bytes, object, personal) {
                (Some(bytes), Some((_, n)), true) => {
                    let sealed = txn.seal_raw(&p.key, doc.as_ref(), bytes)?;
                    Some((txn.store().put_object(&sealed)?, n))
                }
                _ => object,
            };
            let changes = match doc {
                Some(doc) => match txn.put(&p.key, doc)? {
                    PutOutcome::Unchanged => 0,
                    PutOutcome::Changed(n) => n,
                },
                None if txn.current(&p.key)?.is_some() => {
                    txn.remove(&p.key, &DocPath::root())?.len()
                }
                None => 0,
            };
            txn.write().insert_file_version(
                &p.key,
                tx_id,
                stored.map(|(id, _)| id),
                object.map(|(_, n)| n),
            )?;
            txn.write()
                .set_recorded(&p.key, object.map(|(id, _)| id), tx_id)?;
            out.files.push(RecordedFile {
                key: p.key.clone(),
                state: p.state,
                changes,
            });
        }
        if specs_changed {
            txn.write().save_track_specs(specs.entries())?;
        }
        txn.write()
            .save_stat_cache(&scan.cache_updates, fs_now_ns)?;
        if !out.files.is_empty() {
            txn.record_always();
        }
        let commit = txn.commit()?;
        progress(Progress {
            phase: Phase::Recording,
            done: total,
            total,
        });
        out.tx = commit.tx;
        out.warnings = commit.warnings;
        out.tracked += out
            .files
            .iter()
            .filter(|f| f.state == FileState::New)
            .count();
        Ok(out)
    }

    /// Reads the raw bytes of an object.
    pub fn raw_object(&self, id: &ObjectId) -> Result<Vec<u8>> {
        let bytes = self.store.object_bytes(id)?;
        if ObjectId::of(&bytes) != *id {
            return Err(Error::Corrupt(format!(
                "object {id} does not match its name"
            )));
        }
        Ok(bytes)
    }
}
