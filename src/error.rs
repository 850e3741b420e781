//! The library's error type.

use crate::canon::ParseError;
use crate::diff::ApplyError;
use crate::model::{ActorError, KeyError};
use crate::path::{DocPath, PathError};
use crate::time::{Timestamp, WhenError};
use std::path::PathBuf;

/// Everything that can go wrong in `hist`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No `.hist` here or above.
    #[error("not a hist repository (or any parent up to /): {0}")]
    NotARepository(PathBuf),
    /// `init` where a repository already is.
    #[error("a hist repository already exists at {0}")]
    AlreadyInitialized(PathBuf),
    /// The store was written by a newer `hist`.
    #[error("the repository has schema version {found}; this hist understands up to {supported}")]
    NewerSchema {
        /// Version in the file.
        found: i64,
        /// Version this build knows.
        supported: i64,
    },
    /// A bad actor.
    #[error(transparent)]
    Actor(#[from] ActorError),
    /// A bad key.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A bad path.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A bad time.
    #[error(transparent)]
    When(#[from] WhenError),
    /// A JSON text that does not parse.
    #[error("{what} is not valid JSON: {source}")]
    Json {
        /// Which input.
        what: String,
        /// Where and why.
        source: ParseError,
    },
    /// A read of a document that is absent at the moment asked about (`when`; `None`: now).
    #[error("{key} does not exist {}", when.map_or_else(|| "now".to_owned(), |w| format!("at {w}")))]
    NoDocument {
        /// The document key.
        key: String,
        /// The moment asked about (`None`: now).
        when: Option<crate::time::When>,
    },
    /// `--at` earlier than the newest transaction.
    #[error("--at {at} is earlier than the newest transaction ({newest}); history is append-only")]
    AtBeforeNewest {
        /// Asked for.
        at: Timestamp,
        /// Newest in the log.
        newest: Timestamp,
    },
    /// A change that does not fit the document.
    #[error("{key}: {source}")]
    Apply {
        /// The document.
        key: String,
        /// What did not fit.
        source: ApplyError,
    },
    /// A write that would nest the document deeper than hist can read back.
    #[error("{key}: the document would nest {depth} levels deep; at most {max} are allowed")]
    TooDeep {
        /// The document.
        key: String,
        /// How deep it would be.
        depth: usize,
        /// The limit ([`crate::canon::MAX_DEPTH`]).
        max: usize,
    },
    /// An RFC 6902 patch that does not apply to the document.
    #[error("{key}: {source}")]
    Patch {
        /// The document.
        key: String,
        /// The operation that failed.
        source: crate::patch::PatchError,
    },
    /// A rule that cannot be declared or removed.
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// A rename (`hist mv`) that cannot be recorded.
    #[error(transparent)]
    Rename(#[from] RenameError),
    /// A query refused or failed in `hist sql`.
    #[error(transparent)]
    Query(#[from] QueryError),
    /// Crypto-shredding: personal values, keys, forget, backup.
    #[error(transparent)]
    Shred(#[from] ShredError),
    /// The store does not match what it should.
    #[error("the repository is damaged: {0}")]
    Corrupt(String),
    /// SQLite failed.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A tracked-file command was refused.
    #[error(transparent)]
    Track(#[from] TrackError),
    /// The file system failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// A `--keys` glob that does not parse.
    #[error("invalid key glob {glob:?}: {message}")]
    Glob {
        /// The glob.
        glob: String,
        /// What is wrong.
        message: String,
    },
}

/// A rule that cannot be declared or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuleError {
    /// No rule has this id (or it was removed).
    #[error("there is no rule {0}; `hist rules` lists them")]
    NoSuchRule(i64),
}

/// A rename (`hist mv`) that cannot be recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RenameError {
    /// The `--keys` glob does not parse.
    #[error("--keys {glob:?}: {message}")]
    Glob {
        /// The glob.
        glob: String,
        /// What is wrong.
        message: String,
    },
    /// FROM or TO does not end in an object member (`what` is `FROM` or `TO`; `path` as
    /// shown, `""` for the root).
    #[error(
        "{what} {path} is not an object member: a rename moves a field (/plan, /billing/plan, /items[id=7]/cost)"
    )]
    NotAMember {
        /// `FROM` or `TO`.
        what: &'static str,
        /// The path as shown.
        path: String,
    },
    /// One path is inside the other.
    #[error("cannot rename {from} to {to}: one is inside the other")]
    Nested {
        /// FROM.
        from: DocPath,
        /// TO.
        to: DocPath,
    },
    /// A document already has a value at TO.
    #[error("{key} already has a value at {to}; a rename never overwrites one")]
    Occupied {
        /// The document.
        key: String,
        /// TO.
        to: DocPath,
    },
    /// A parent of TO holds something other than an object (`holder`: where, as shown;
    /// `found`: what it holds).
    #[error("{key}: cannot move a value to {to}: {holder} holds {found}, not an object")]
    NotAnObject {
        /// The document.
        key: String,
        /// TO.
        to: DocPath,
        /// The parent, as shown.
        holder: String,
        /// The type it holds.
        found: String,
    },
    /// A missing parent of TO is not an object member (it cannot be created).
    #[error("{key}: cannot move a value to {to}: there is no {missing}")]
    NoParent {
        /// The document.
        key: String,
        /// TO.
        to: DocPath,
        /// The parent that is missing.
        missing: DocPath,
    },
}

/// A query `hist sql` refused or that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// Refused: SQLite's authorizer denied it, or it would write to the read-only store.
    #[error("hist sql is read-only; this query was refused ({0})")]
    Refused(String),
    /// The statement writes.
    #[error("hist sql is read-only; this statement would write")]
    Writes,
    /// SQLite could not run it (a syntax error, an unknown table…).
    #[error("the query failed: {0}")]
    Failed(String),
}

/// How an error is classified, for callers that answer with a code: the command line's
/// exit status, the C ABI's return code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The command could not be done (a bad JSON value, an absent key, a refused query,
    /// a damaged store, a full disk…): exit status 1.
    Failure,
    /// It was asked wrongly (an invalid actor, key, path or time): exit status 2.
    Usage,
    /// A bug in hist: exit status 255.
    Internal,
}

impl ErrorClass {
    /// The exit status (and C ABI return code) of this class: 1, 2 or 255.
    pub fn code(self) -> u8 {
        match self {
            Self::Failure => 1,
            Self::Usage => 2,
            Self::Internal => 255,
        }
    }
}

/// Why a tracking command was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrackError {
    /// A file that does not parse in its format.
    #[error(transparent)]
    Parse(#[from] FileParseError),
    /// A path argument outside the repository.
    #[error("{path} is outside the repository ({root})")]
    OutsideRoot {
        /// As given.
        path: String,
        /// The repository root.
        root: String,
    },
    /// A key that would be written outside the repository root.
    #[error(
        "{0:?} does not name a file inside the repository; a tracked file's key is a relative path without `.` or `..`"
    )]
    UnsafeKey(String),
    /// A path through a symbolic link.
    #[error("{0} is a symbolic link; hist does not follow links")]
    Symlink(String),
    /// A path inside `.hist/` or `.git/`.
    #[error("{0} is inside .hist/ or .git/, which hist never tracks")]
    Reserved(String),
    /// A path that does not exist.
    #[error("{0}: no such file or directory")]
    NotFound(String),
    /// A path outside the tracked set.
    #[error("{0} is not tracked")]
    NotTracked(String),
    /// A file name that cannot be a key.
    #[error("{0}: the file name is not UTF-8 text without control characters")]
    BadName(String),
    /// The file's bytes belonged to a forgotten subject.
    #[error("the bytes of {0} belonged to a subject that was forgotten; they cannot be restored")]
    Forgotten(String),
    /// No version of the file then.
    #[error("{key} was not a tracked file {when}")]
    NoVersion {
        /// The file's key.
        key: String,
        /// `now`, `at @…`.
        when: String,
    },
    /// A restore that would overwrite uncommitted changes.
    #[error("{0} has changes that are not committed")]
    Uncommitted(String),
    /// A restore that would overwrite another file.
    #[error("{0} already exists")]
    Exists(String),
    /// Something other than a regular file is where a file should be written.
    #[error("{0} is not a regular file")]
    NotAFile(String),
    /// A file replaced while it was being read.
    #[error("{0} changed while hist was reading it; run the command again")]
    Raced(String),
    /// An ignore file (`.histignore`, `.gitignore`, `.git/info/exclude`) that cannot be
    /// read or does not parse (the message names it).
    #[error("an ignore file cannot be used: {0}")]
    Ignore(String),
}

/// A tracked file whose content does not parse in its format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file} is not valid {format} (line {line}, column {column}): {message}")]
pub struct FileParseError {
    /// The file's key (its path relative to the repository root).
    pub file: String,
    /// `JSON`, `JSONC`, `TOML` or `YAML`.
    pub format: &'static str,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// What protects the master key of `keys.db` at rest (crypto-shredding; here, beside
/// [`ShredError::Locked`], which names it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// An age identity stored in `keys.db` itself: file permissions are the only protection
    /// (the default).
    Repository,
    /// An age identity kept outside the repository (`--identity FILE`, `HIST_IDENTITY`).
    Identity,
    /// A passphrase (age's scrypt).
    Passphrase,
}

impl Protection {
    /// `repository`, `identity` or `passphrase`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protection::Repository => "repository",
            Protection::Identity => "identity",
            Protection::Passphrase => "passphrase",
        }
    }
}

/// Why a crypto-shredding operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShredError {
    /// `keys.db` is not there, but sealed values need it.
    #[error("{} is missing; it holds the keys of the personal values", .0.display())]
    KeysMissing(PathBuf),
    /// Something cryptographic failed (a damaged `keys.db`, no randomness).
    #[error("{0}")]
    Crypto(String),
    /// A personal rule over values that are already in the log in plaintext.
    #[error(
        "cannot declare {pattern} personal: {count} {changes} in the log (the first: {key}, tx {tx}) \
         already {hold} plaintext there",
        changes = if *count == 1 { "change" } else { "changes" },
        hold = if *count == 1 { "holds" } else { "hold" },
    )]
    PlaintextInLog {
        /// The rule's pattern.
        pattern: String,
        /// How many change rows hold plaintext there.
        count: usize,
        /// The first such row's key…
        key: String,
        /// …and transaction.
        tx: i64,
    },
    /// A personal value whose subject cannot be read from the document.
    #[error(
        "{key}: the personal value at {pattern} takes its subject from {from}, \
         where the document holds no string or number"
    )]
    NoSubject {
        /// The document.
        key: String,
        /// Where the personal value is.
        pattern: String,
        /// The rule's `--subject-from`.
        from: String,
    },
    /// `forget` of a subject that has no key.
    #[error("no personal values of subject {0:?} are stored")]
    UnknownSubject(String),
    /// `forget` of a subject that was forgotten and has no new values.
    #[error("subject {subject:?} was already forgotten in tx {tx}")]
    AlreadyForgotten {
        /// The subject.
        subject: String,
        /// The forget.
        tx: i64,
    },
    /// A backup to a place that already holds one.
    #[error("{} already exists; a backup goes to a new place", .0.display())]
    BackupExists(PathBuf),
    /// A sealed value that its subject's key does not open (and the subject was never
    /// forgotten): damage.
    #[error("a sealed value of subject {0} does not decrypt with its key")]
    Damaged(String),
    /// A personal value was to be read or written, but the key that unlocks `keys.db` (an
    /// age identity kept outside the repository, or a passphrase) was not given.
    #[error(
        "this needs the personal values' keys, and keys.db is locked: it opens with {} kept outside the repository",
        if *.0 == Protection::Passphrase { "a passphrase" } else { "an age identity" }
    )]
    Locked(Protection),
    /// The identity or passphrase given does not open `keys.db`, or an identity file that
    /// cannot be used (`what` says which).
    #[error("{0}")]
    WrongKey(String),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// How this error is classified (see [`ErrorClass`]).
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Actor(_) | Error::Key(_) | Error::Path(_) | Error::When(_) => ErrorClass::Usage,
            _ => ErrorClass::Failure,
        }
    }

    /// True when the disk (or the file system's quota) is full: nothing was recorded, and
    /// freeing space and running the command again will do.
    pub fn is_disk_full(&self) -> bool {
        match self {
            Error::Sqlite(e) => e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull),
            Error::Io { source, .. } => source.kind() == std::io::ErrorKind::StorageFull,
            _ => false,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }
}
