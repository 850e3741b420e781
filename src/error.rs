//! The library's error type.

use crate::canon::ParseError;
use crate::diff::ApplyError;
use crate::model::{ActorError, KeyError};
use crate::path::PathError;
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
    /// An RFC 6902 patch that is malformed or fails.
    #[error("{0}")]
    Patch(String),
    /// A rule that cannot be declared or removed.
    #[error("{0}")]
    Rule(String),
    /// A rename (`hist mv`) that cannot be recorded.
    #[error("{0}")]
    Rename(String),
    /// A query refused by `hist sql`.
    #[error("{0}")]
    Query(String),
    /// Crypto-shredding: personal values, keys, forget, backup.
    #[error(transparent)]
    Shred(#[from] crate::shred::ShredError),
    /// The store does not match what it should.
    #[error("the repository is damaged: {0}")]
    Corrupt(String),
    /// SQLite failed.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A tracked-file command was refused.
    #[error(transparent)]
    Track(#[from] crate::track::TrackError),
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

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }
}
