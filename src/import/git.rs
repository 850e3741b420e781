//! Importing a git repository's history: every version of some files along a branch's
//! first-parent history, oldest first ([`Repo::import_git`]).
//!
//! **How git is read.** With the `git` program, not a library: one `git log` lists the
//! commits that touched the files (first parent only, each merge compared with its first
//! parent) with the blob id of each file's new version, and one long-running
//! `git cat-file --batch` hands over the blobs, one at a time, as the import asks for them.
//! Both stream: nothing is held but the versions of the commit being recorded. This adds no
//! dependency to the library (a git library crate is either very heavy to compile, gix, or
//! binds libgit2, git2), reads every repository git itself can (packs, alternates, partial
//! clones, new formats), and is what git's own tools do; it needs `git` on the PATH.
//!
//! **What is recorded.** Each version is a snapshot ([`Txn::put_json`](crate::Txn::put_json),
//! the key's array rules apply) at the commit's committer time, in UTC; a committer time
//! earlier than the one before it is raised to it. The actor is the one given or `git:` and
//! the author's name ([`Actor::normalized`]); the reason is the commit's subject and its
//! short id. A version that is not JSON (an empty or half-written file), a deleted file or
//! one that is not a regular file is skipped with a warning that names the commit; a version
//! equal to the last one records a check.
//!
//! **Resuming.** The repository remembers, per git repository, file and key, the last
//! commit the import went through, with the snapshots of each batch: running the same import
//! again (after an interruption, or from cron after every scrape) goes on from there. A
//! remembered commit that is no longer in the first-parent history is refused, as is a
//! history older than the repository's newest transaction; both before anything is written.

use super::source::SourceRun;
use super::{ImportOptions, Refusal, Snapshot, SourceError, SourceEvent, SourceSummary};
use crate::model::{Actor, check_key};
use crate::repo::Repo;
use crate::store::GitMark;
use crate::time::Timestamp;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// How many hex digits of a commit id name it in reasons and warnings.
pub const SHORT_ID: usize = 12;

/// What to import from a git repository.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GitImport {
    /// The repository (its work tree or any directory in it, or a bare repository).
    pub repo: PathBuf,
    /// The files, each with the key it is imported under.
    pub files: Vec<GitFile>,
    /// The branch or commit whose first-parent history is imported (`None`: `HEAD`).
    pub branch: Option<String>,
    /// The actor of every version (`None`: `git:` and the author's name).
    pub actor: Option<Actor>,
    /// Count the commits to import first, for a progress report ([`SourceEvent::Total`]).
    pub count: bool,
}

/// A file to import and its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitFile {
    /// Its path in the repository, from the top (`states.json`, `data/feed.json`).
    pub path: String,
    /// The document key its versions are recorded under.
    pub key: String,
}

impl GitImport {
    /// An import from the repository at `repo`, of no file yet.
    pub fn new(repo: impl Into<PathBuf>) -> Self {
        Self {
            repo: repo.into(),
            files: Vec::new(),
            branch: None,
            actor: None,
            count: false,
        }
    }

    /// With the file `path`, under `key` (`None`: the path itself).
    #[must_use]
    pub fn file(mut self, path: &str, key: Option<&str>) -> Self {
        let path = path.strip_prefix("./").unwrap_or(path).to_owned();
        let key = key.map_or_else(|| path.clone(), str::to_owned);
        self.files.push(GitFile { path, key });
        self
    }

    /// With the history of `branch` (a branch, tag or commit) rather than `HEAD`'s.
    #[must_use]
    pub fn branch(mut self, branch: Option<String>) -> Self {
        self.branch = branch;
        self
    }

    /// With every version recorded by `actor`.
    #[must_use]
    pub fn actor(mut self, actor: Option<Actor>) -> Self {
        self.actor = actor;
        self
    }

    /// Counting the commits first (for a progress bar) or not.
    #[must_use]
    pub fn count(mut self, count: bool) -> Self {
        self.count = count;
        self
    }

    /// The files, checked: at least one, valid keys, none twice.
    fn checked_files(&self) -> Result<&[GitFile], Refusal> {
        if self.files.is_empty() {
            return Err(Refusal::NoFile);
        }
        for (i, f) in self.files.iter().enumerate() {
            check_key(&f.key)?;
            if f.path.is_empty() {
                return Err(Refusal::NoFile);
            }
            let earlier = &self.files[..i];
            if earlier.iter().any(|e| e.key == f.key) {
                return Err(Refusal::Twice(f.key.clone()));
            }
            if earlier.iter().any(|e| e.path == f.path) {
                return Err(Refusal::Twice(f.path.clone()));
            }
        }
        Ok(&self.files)
    }
}

/// What an import from a git repository did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitSummary {
    /// Commits read, versions recorded and skipped, times raised.
    pub summary: SourceSummary,
    /// The git directory, absolute: what the repository remembers the import by.
    pub git_dir: String,
    /// The commit imported up to (the branch's tip when the import began).
    pub tip: String,
    /// The commit an earlier import had got to, when this one went on from there.
    pub after: Option<String>,
}

/// The short form of a commit id.
pub fn short_id(id: &str) -> &str {
    id.get(..SHORT_ID).unwrap_or(id)
}

/// A failure of the `git` program: what was run and what git said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("git {command}: {message}")]
pub struct GitError {
    /// The git command (`log`, `cat-file`, …).
    pub command: String,
    /// Git's message, or why it could not be run.
    pub message: String,
}

/// The `git` program on one repository, with nothing from the environment that would make
/// it read another repository, take paths as patterns, or print other than asked.
struct Git {
    dir: PathBuf,
}

/// Variables that would change what git reads or how it reads paths.
const GIT_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_NAMESPACE",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_EXTERNAL_DIFF",
];

impl Git {
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&self.dir);
        for setting in [
            "core.quotePath=false",
            "log.showSignature=false",
            "log.follow=false",
            "log.showRoot=true",
            "i18n.logOutputEncoding=UTF-8",
        ] {
            cmd.args(["-c", setting]);
        }
        for var in GIT_ENV {
            cmd.env_remove(var);
        }
        cmd.args(args).stdin(Stdio::null());
        cmd
    }

    fn error(args: &[&str], message: impl Into<String>) -> GitError {
        GitError {
            command: args.first().copied().unwrap_or_default().to_owned(),
            message: message.into(),
        }
    }

    /// Runs git; its standard output without the final newline, or git's message.
    fn run(&self, args: &[&str]) -> Result<String, GitError> {
        let out = self
            .command(args)
            .output()
            .map_err(|e| Self::error(args, e.to_string()))?;
        if !out.status.success() {
            let message = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            return Err(Self::error(args, message));
        }
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        while text.ends_with('\n') {
            text.pop();
        }
        Ok(text)
    }

    /// Starts git with its standard output piped, and its standard error gathered by a
    /// thread ([`Running::finish`] reads it).
    fn spawn(&self, args: &[&str], stdin: bool) -> Result<Running, GitError> {
        let mut cmd = self.command(args);
        if stdin {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Self::error(args, e.to_string()))?;
        let stderr = child.stderr.take().map(|mut err| {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = err.read_to_string(&mut text);
                text
            })
        });
        let stdout = child.stdout.take().map(BufReader::new);
        Ok(Running {
            command: args.first().copied().unwrap_or_default().to_owned(),
            child,
            stdout,
            stderr,
        })
    }

    /// A pathspec for exactly `path`, from the repository's top.
    fn pathspec(path: &str) -> String {
        format!(":(top,literal){path}")
    }
}

/// A git process whose output is being read.
struct Running {
    command: String,
    child: Child,
    stdout: Option<BufReader<ChildStdout>>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Running {
    fn stdout(&mut self) -> Result<&mut BufReader<ChildStdout>, GitError> {
        let command = &self.command;
        self.stdout.as_mut().ok_or_else(|| GitError {
            command: command.clone(),
            message: "no output".into(),
        })
    }

    fn error(&self, message: impl Into<String>) -> GitError {
        GitError {
            command: self.command.clone(),
            message: message.into(),
        }
    }

    /// Waits for git to end (its output read to the end); its message if it failed.
    fn finish(&mut self) -> Result<(), GitError> {
        self.stdout = None;
        let status = self.child.wait().map_err(|e| self.error(e.to_string()))?;
        let stderr = self
            .stderr
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        if status.success() {
            Ok(())
        } else {
            Err(self.error(stderr.trim().to_owned()))
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Stopped early (an error, or enough read): git must not wait on a full pipe.
        self.stdout = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// A commit of the history read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    /// Its full id.
    pub id: String,
    /// Its committer time.
    pub time: Timestamp,
    /// Its author's name.
    pub author: String,
    /// Its subject (the first line of its message).
    pub subject: String,
}

impl Commit {
    /// `commit 1a2b3c4d5e6f (subject)`, as warnings name it.
    pub fn place(&self) -> String {
        if self.subject.is_empty() {
            format!("commit {}", short_id(&self.id))
        } else {
            format!("commit {} ({})", short_id(&self.id), self.subject)
        }
    }

    /// `subject (1a2b3c4d5e6f)`, the reason its versions are recorded with.
    pub fn reason(&self) -> String {
        if self.subject.is_empty() {
            format!("commit {}", short_id(&self.id))
        } else {
            format!("{} ({})", self.subject, short_id(&self.id))
        }
    }
}

/// What a commit made of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content {
    /// The file's new bytes.
    Bytes(Vec<u8>),
    /// The file was deleted.
    Deleted,
    /// The path holds something else than a regular file (what it holds).
    NotAFile(&'static str),
}

/// What one commit made of the files it touched: (index in the paths given, content).
pub type Versions = Vec<(usize, Content)>;

/// One change to a file in `git log --raw` (the mode and blob id after, the status).
struct RawEntry {
    mode: String,
    blob: String,
    status: u8,
    path: String,
}

/// The versions of some files along the first-parent history of a commit, oldest first,
/// read with the `git` program (see the [module doc](self)): one `git log` and one
/// `git cat-file --batch`, both streaming.
pub struct GitHistory {
    paths: Vec<String>,
    log: Running,
    blobs: Running,
    blob_input: ChildStdin,
    /// The header of the next commit, read with the end of the one before.
    next: Option<Commit>,
    buf: Vec<u8>,
}

impl GitHistory {
    /// The versions of `paths` (from the repository's top) in the first-parent history of
    /// `tip` (a commit id, branch or tag) in the repository at `repo`, after commit `after`
    /// when given (which must be in that history).
    pub fn open(
        repo: &Path,
        tip: &str,
        after: Option<&str>,
        paths: &[String],
    ) -> Result<Self, GitError> {
        Self::open_with(
            &Git {
                dir: repo.to_path_buf(),
            },
            tip,
            after,
            paths,
        )
    }

    fn open_with(
        git: &Git,
        tip: &str,
        after: Option<&str>,
        paths: &[String],
    ) -> Result<Self, GitError> {
        let not_after = after.map(|a| format!("^{a}"));
        let specs: Vec<String> = paths.iter().map(|p| Git::pathspec(p)).collect();
        let mut args = vec![
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            "--reverse",
            "--no-renames",
            "--raw",
            "--no-abbrev",
            "-z",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--format=%H%n%ct%n%an%n%s",
            "--end-of-options",
            tip,
        ];
        args.extend(not_after.as_deref());
        args.push("--");
        args.extend(specs.iter().map(String::as_str));
        let log = git.spawn(&args, false)?;
        let mut blobs = git.spawn(&["cat-file", "--batch"], true)?;
        let blob_input = blobs
            .child
            .stdin
            .take()
            .ok_or_else(|| blobs.error("no input"))?;
        Ok(Self {
            paths: paths.to_vec(),
            log,
            blobs,
            blob_input,
            next: None,
            buf: Vec::new(),
        })
    }

    /// The next NUL-terminated field of `git log -z`, without the newlines git puts before
    /// a commit's changes; `None` at the end.
    fn field(&mut self) -> Result<Option<Vec<u8>>, GitError> {
        loop {
            self.buf.clear();
            let n = self
                .log
                .stdout()?
                .read_until(0, &mut self.buf)
                .map_err(|e| self.log.error(e.to_string()))?;
            if n == 0 {
                return Ok(None);
            }
            if self.buf.last() == Some(&0) {
                self.buf.pop();
            }
            let start = self.buf.iter().take_while(|&&b| b == b'\n').count();
            if start < self.buf.len() {
                return Ok(Some(self.buf[start..].to_vec()));
            }
        }
    }

    fn header(&self, field: &[u8]) -> Result<Commit, GitError> {
        let text = String::from_utf8_lossy(field);
        let mut lines = text.split('\n');
        let mut next = || lines.next().unwrap_or_default().to_owned();
        let (id, time, author, subject) = (next(), next(), next(), next());
        let time = time
            .parse::<i64>()
            .ok()
            .and_then(|s| s.checked_mul(1_000_000))
            .filter(|_| id.len() >= SHORT_ID && id.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.log.error(format!("unexpected output {text:?}")))?;
        Ok(Commit {
            id,
            time: Timestamp(time),
            author,
            subject,
        })
    }

    /// `:100644 100644 OLD NEW M` (the path follows in the next field).
    fn raw_entry(&self, field: &[u8], path: Vec<u8>) -> Result<RawEntry, GitError> {
        let text = String::from_utf8_lossy(field);
        let parts: Vec<&str> = text.trim_start_matches(':').split(' ').collect();
        let [_, mode, _, blob, status] = parts[..] else {
            return Err(self.log.error(format!("unexpected output {text:?}")));
        };
        Ok(RawEntry {
            mode: mode.to_owned(),
            blob: blob.to_owned(),
            status: status.bytes().next().unwrap_or(b'?'),
            path: String::from_utf8_lossy(&path).into_owned(),
        })
    }

    /// The next commit that touched a file, and what it made of each one it touched (by
    /// index in the paths given, in that order); `None` after the last.
    pub fn next_commit(&mut self) -> Result<Option<(Commit, Versions)>, GitError> {
        let commit = match self.next.take() {
            Some(c) => c,
            None => match self.field()? {
                Some(field) => self.header(&field)?,
                None => {
                    self.log.finish()?;
                    return Ok(None);
                }
            },
        };
        let mut entries = Vec::new();
        while let Some(field) = self.field()? {
            if field.first() == Some(&b':') {
                let path = self
                    .field()?
                    .ok_or_else(|| self.log.error("output ends in a change without a path"))?;
                entries.push(self.raw_entry(&field, path)?);
            } else {
                self.next = Some(self.header(&field)?);
                break;
            }
        }
        let mut versions = Vec::new();
        for (i, path) in self.paths.clone().iter().enumerate() {
            let Some(entry) = entries.iter().find(|e| &e.path == path) else {
                continue;
            };
            let content = match (entry.status, entry.mode.as_str()) {
                (b'D', _) => Content::Deleted,
                (_, "160000") => Content::NotAFile("a submodule"),
                (_, "120000") => Content::NotAFile("a symbolic link"),
                _ => Content::Bytes(self.blob(&entry.blob)?),
            };
            versions.push((i, content));
        }
        Ok(Some((commit, versions)))
    }

    /// The bytes of blob `id`, from `git cat-file --batch`.
    fn blob(&mut self, id: &str) -> Result<Vec<u8>, GitError> {
        let fail = |blobs: &Running, e: std::io::Error| blobs.error(e.to_string());
        writeln!(self.blob_input, "{id}").map_err(|e| fail(&self.blobs, e))?;
        self.blob_input.flush().map_err(|e| fail(&self.blobs, e))?;
        let out = self.blobs.stdout()?;
        let mut line = String::new();
        out.read_line(&mut line)
            .map_err(|e| GitError::from_io("cat-file", e))?;
        // `<id> blob <size>`, or `<id> missing`.
        let size = match line.trim_end().split(' ').collect::<Vec<_>>()[..] {
            [_, "blob", size] => size.parse::<usize>().ok(),
            _ => None,
        }
        .ok_or_else(|| GitError {
            command: "cat-file".into(),
            message: format!("cannot read blob {id}: {}", line.trim_end()),
        })?;
        let mut bytes = vec![0; size];
        out.read_exact(&mut bytes)
            .map_err(|e| GitError::from_io("cat-file", e))?;
        let mut newline = [0u8; 1];
        out.read_exact(&mut newline)
            .map_err(|e| GitError::from_io("cat-file", e))?;
        Ok(bytes)
    }
}

impl GitError {
    fn from_io(command: &str, e: std::io::Error) -> Self {
        Self {
            command: command.to_owned(),
            message: e.to_string(),
        }
    }
}

/// The repository's git directory, absolute (what an import is remembered by). Refused
/// when git cannot be run or `repo` is no git repository.
fn git_dir(git: &Git, repo: &Path) -> Result<String, Refusal> {
    if let Err(e) = Command::new("git").arg("--version").output() {
        return Err(Refusal::NoGit(e.to_string()));
    }
    if !repo.is_dir() {
        return Err(Refusal::Git(format!(
            "{}: no such directory",
            repo.display()
        )));
    }
    let dir = git.run(&["rev-parse", "--absolute-git-dir"]).map_err(|e| {
        Refusal::Git(format!(
            "{} is not a git repository ({})",
            repo.display(),
            e.message
        ))
    })?;
    Ok(std::fs::canonicalize(&dir).map_or(dir, |p| p.to_string_lossy().into_owned()))
}

/// The commit `branch` names.
fn resolve(git: &Git, repo: &Path, branch: &str) -> Result<String, Refusal> {
    let rev = format!("{branch}^{{commit}}");
    git.run(&["rev-parse", "--verify", "--quiet", "--end-of-options", &rev])
        .map_err(|_| {
            Refusal::Git(format!(
                "{} has no commit {branch} (no such branch, tag or commit, or no commit yet)",
                repo.display()
            ))
        })
}

/// True when `commit` is in the first-parent history of `tip`.
fn in_first_parent_history(git: &Git, tip: &str, commit: &str) -> Result<bool, GitError> {
    let mut walk = git.spawn(
        &["rev-list", "--first-parent", "--end-of-options", tip],
        false,
    )?;
    let out = walk.stdout()?;
    let mut line = String::new();
    loop {
        line.clear();
        let n = out
            .read_line(&mut line)
            .map_err(|e| GitError::from_io("rev-list", e))?;
        if n == 0 {
            walk.finish()?;
            return Ok(false);
        }
        if line.trim_end() == commit {
            // The rest of the walk is not needed: dropping it stops git.
            return Ok(true);
        }
    }
}

impl Repo {
    /// Imports every version of the files of `spec` along the first-parent history of its
    /// branch, oldest first (see the [module doc](self)), each one an `ingest` transaction
    /// at its commit's committer time, committed in batches with where the import got to.
    /// `progress` hears of the count (when asked for), of warnings, and of each batch
    /// committed.
    ///
    /// Refused before anything is written ([`SourceError::Refused`]) when a file is in no
    /// commit, when the commit an earlier import got to is no longer in the history, and
    /// when the history starts before the repository's newest transaction. A failure
    /// partway keeps the batches committed before it: running the import again goes on
    /// from there.
    pub fn import_git(
        &mut self,
        spec: &GitImport,
        now: Timestamp,
        options: &ImportOptions,
        mut progress: impl FnMut(SourceEvent<'_>),
    ) -> Result<GitSummary, SourceError> {
        let files = spec.checked_files()?;
        let git = Git {
            dir: spec.repo.clone(),
        };
        let repo_id = git_dir(&git, &spec.repo)?;
        let branch = spec.branch.as_deref().unwrap_or("HEAD");
        let tip = resolve(&git, &spec.repo, branch)?;
        let after = self.agreed_mark(&repo_id, files)?;
        let read = |e: GitError, recorded| SourceError::Read {
            message: e.to_string(),
            recorded,
        };
        let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
        match &after {
            Some(mark) => {
                if !in_first_parent_history(&git, &tip, &mark.commit)
                    .map_err(|e| read(e, SourceSummary::default()))?
                {
                    return Err(Refusal::Rewritten {
                        path: files[0].path.clone(),
                        commit: mark.commit.clone(),
                        branch: branch.to_owned(),
                    }
                    .into());
                }
            }
            None => {
                for path in &paths {
                    let spec_arg = Git::pathspec(path);
                    let found = git
                        .run(&[
                            "log",
                            "--first-parent",
                            "-1",
                            "--format=%H",
                            "--end-of-options",
                            &tip,
                            "--",
                            &spec_arg,
                        ])
                        .map_err(|e| read(e, SourceSummary::default()))?;
                    if found.is_empty() {
                        return Err(Refusal::NoSuchFile {
                            path: path.clone(),
                            branch: branch.to_owned(),
                            repo: spec.repo.display().to_string(),
                        }
                        .into());
                    }
                }
            }
        }
        let after_commit = after.as_ref().map(|m| m.commit.as_str());
        if spec.count {
            let not_after = after_commit.map(|c| format!("^{c}"));
            let specs: Vec<String> = paths.iter().map(|p| Git::pathspec(p)).collect();
            let mut args = vec!["rev-list", "--count", "--first-parent", "--end-of-options"];
            args.push(&tip);
            args.extend(not_after.as_deref());
            args.push("--");
            args.extend(specs.iter().map(String::as_str));
            let count = git
                .run(&args)
                .map_err(|e| read(e, SourceSummary::default()))?;
            progress(SourceEvent::Total(count.trim().parse().unwrap_or(0)));
        }
        let mut history = GitHistory::open_with(&git, &tip, after_commit, &paths)
            .map_err(|e| read(e, SourceSummary::default()))?;
        let mut run = SourceRun::begin(self, now, options, after.as_ref().map(|m| m.at))?;
        let mut last = None;
        loop {
            let next = history
                .next_commit()
                .map_err(|e| read(e, run.committed()))?;
            let Some((commit, versions)) = next else {
                break;
            };
            let at = run.read(commit.time, || commit.place())?;
            record_commit(&mut run, spec, files, &commit, at, versions, &mut progress)?;
            // Remembered with the versions, in the same batch (one row per file, rewritten).
            remember(&run, &repo_id, files, &commit.id)?;
            last = Some(commit.id);
            run.done(&mut progress)?;
        }
        drop(history);
        if last.is_some() || after_commit != Some(tip.as_str()) {
            remember(&run, &repo_id, files, &tip)?;
        }
        let summary = run.finish(&mut progress)?;
        Ok(GitSummary {
            summary,
            git_dir: repo_id,
            tip,
            after: after.map(|m| m.commit),
        })
    }

    /// Where an earlier import of `files` from `repo_id` got to: the same commit for all
    /// of them, or none for all.
    fn agreed_mark(
        &self,
        repo_id: &str,
        files: &[GitFile],
    ) -> Result<Option<GitMark>, SourceError> {
        let mut marks = Vec::with_capacity(files.len());
        for f in files {
            let mark = self
                .store
                .git_mark(repo_id, &f.path, &f.key)
                .map_err(|e| SourceError::store(e, SourceSummary::default()))?;
            marks.push(mark);
        }
        let describe = |m: &Option<GitMark>| match m {
            Some(m) => format!("imported up to commit {}", short_id(&m.commit)),
            None => "never imported".to_owned(),
        };
        for (i, mark) in marks.iter().enumerate().skip(1) {
            let same = match (mark, &marks[0]) {
                (Some(a), Some(b)) => a.commit == b.commit,
                (None, None) => true,
                _ => false,
            };
            if !same {
                return Err(Refusal::Apart {
                    path: files[i].path.clone(),
                    its: describe(mark),
                    other: files[0].path.clone(),
                    theirs: describe(&marks[0]),
                }
                .into());
            }
        }
        Ok(marks.swap_remove(0))
    }
}

/// Records the versions of one commit at `at`.
fn record_commit(
    run: &mut SourceRun<'_>,
    spec: &GitImport,
    files: &[GitFile],
    commit: &Commit,
    at: Timestamp,
    versions: Versions,
    progress: &mut impl FnMut(SourceEvent<'_>),
) -> Result<(), SourceError> {
    let place = commit.place();
    let actor = spec
        .actor
        .clone()
        .unwrap_or_else(|| Actor::normalized("git", &commit.author));
    let reason = commit.reason();
    let mut warn = |message: &str| {
        progress(SourceEvent::Warning {
            place: &place,
            message,
        });
    };
    for (i, content) in versions {
        let file = &files[i];
        let doc = match content {
            Content::Bytes(doc) => doc,
            Content::Deleted => {
                let message = format!(
                    "{} was deleted; skipped ({} keeps its last version)",
                    file.path, file.key
                );
                run.skip(&mut warn, &message);
                continue;
            }
            Content::NotAFile(what) => {
                run.skip(
                    &mut warn,
                    &format!("{} is {what}, not a file; skipped", file.path),
                );
                continue;
            }
        };
        let snapshot = Snapshot {
            key: &file.key,
            at: Some(at),
            actor: &actor,
            reason: Some(&reason),
            doc: &doc,
        };
        run.ingest(&snapshot, &file.path, &place, &mut warn)?;
    }
    Ok(())
}

/// Records, with the open batch, that the import of `files` from `repo_id` went through
/// commit `id`.
fn remember(
    run: &SourceRun<'_>,
    repo_id: &str,
    files: &[GitFile],
    id: &str,
) -> Result<(), SourceError> {
    let Some(at) = run.floor() else {
        return Ok(());
    };
    let mark = GitMark {
        commit: id.to_owned(),
        at,
    };
    for f in files {
        run.repo()
            .store
            .set_git_mark(repo_id, &f.path, &f.key, &mark)
            .map_err(|e| SourceError::store(e, run.committed()))?;
    }
    Ok(())
}
