//! What the imports from other histories (a git repository, a SQLite query) share: their
//! events, their summary, their errors, the raising of times that go backwards, and the
//! run itself ([`SourceRun`]: each item's snapshot through the batched ingest, skipped with
//! a warning when it is not JSON, the batches committed and reported).

use super::{Batches, ImportOptions, ImportSummary, RecordError, Snapshot};
use crate::error::Error;
use crate::repo::Repo;
use crate::time::Timestamp;

/// What an import from a git repository or a SQLite query reports as it goes.
#[derive(Debug)]
#[non_exhaustive]
pub enum SourceEvent<'a> {
    /// How many items (commits, rows) the import is about to read; reported first, and only
    /// when counting was asked for (it costs a pass over the source).
    Total(u64),
    /// A warning about one item: a version skipped (not JSON, deleted), an array recorded
    /// as one opaque value.
    Warning {
        /// Which item: `commit 1a2b3c4d5e6f (Latest data)`, `row cdc/states at …`.
        place: &'a str,
        /// One sentence.
        message: &'a str,
    },
    /// One more item (commit, row) was read and recorded with the open batch (committed
    /// with it, [`SourceEvent::Committed`]): for a progress bar.
    Read {
        /// Items read so far.
        done: u64,
    },
    /// A batch was committed: what it reports is recorded for good (an interrupted import
    /// loses none of it, and running it again goes on from there).
    Committed {
        /// Items read so far (commits, rows), every one of them now recorded.
        done: u64,
        /// The snapshots recorded so far.
        summary: &'a ImportSummary,
    },
}

/// What an import from a git repository or a SQLite query did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SourceSummary {
    /// Items read: commits that touched a file, or rows.
    pub read: u64,
    /// The snapshots recorded (a version or row each, but the skipped ones).
    pub snapshots: ImportSummary,
    /// Versions or rows skipped with a warning (not JSON, a deleted file).
    pub skipped: u64,
    /// Times earlier than the one before them, recorded at that one instead.
    pub raised: u64,
}

/// Why an import from a git repository or a SQLite query was refused before it wrote
/// anything. Each names what to do about it where something can be done.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// No file to import was named.
    #[error("no file to import: name one with --file PATH")]
    NoFile,
    /// The same key for two files, or the same file twice under one key.
    #[error("{0:?} is named twice: each file is imported under a key of its own")]
    Twice(String),
    /// A key that is not a valid document key.
    #[error(transparent)]
    Key(#[from] crate::model::KeyError),
    /// The `git` program could not be run.
    #[error("cannot run git: {0}; hist reads git repositories with the git program")]
    NoGit(String),
    /// Not a git repository, or no such branch or commit in it: git's own words.
    #[error("{0}")]
    Git(String),
    /// A file that no commit of the branch's first-parent history holds.
    #[error("{path} is in no commit of {branch} in {repo}")]
    NoSuchFile {
        /// The file, from the repository's top.
        path: String,
        /// The branch (or commit) as given.
        branch: String,
        /// The repository as given.
        repo: String,
    },
    /// The commit an earlier import got to is no longer in the branch's first-parent
    /// history: the history was rewritten.
    #[error(
        "{path} was imported up to commit {commit}, which is no longer in the first-parent \
         history of {branch}: the history was rewritten"
    )]
    Rewritten {
        /// The file.
        path: String,
        /// The commit remembered.
        commit: String,
        /// The branch.
        branch: String,
    },
    /// The files were imported up to different commits (or some never were): they are
    /// imported together or not at all.
    #[error(
        "{path} was {its}, {other} was {theirs}: files of one repository are imported \
         together"
    )]
    Apart {
        /// One file.
        path: String,
        /// Where its import got to (`imported up to commit X`, `never imported`).
        its: String,
        /// Another file.
        other: String,
        /// Where that one's got to.
        theirs: String,
    },
    /// The history starts before the repository's newest transaction: time never goes
    /// backwards in a repository.
    #[error(
        "the history starts at {first} ({place}), before the repository's newest transaction \
         (tx {tx} at {newest}); time never goes backwards in a repository"
    )]
    BeforeNewest {
        /// The time of the first version (raised, when it follows an earlier import).
        first: Timestamp,
        /// Its commit or row.
        place: String,
        /// The newest transaction.
        tx: i64,
        /// Its time.
        newest: Timestamp,
    },
    /// The SQLite database cannot be opened or the query cannot be run: SQLite's words.
    #[error("{0}")]
    Sqlite(String),
    /// The query gives no actor column, and no actor was given for its rows.
    #[error("the query gives no actor column and no actor was given for its rows")]
    NoActor,
    /// The query's rows lack a column the import needs.
    #[error("the query gives no {0:?} column (it gives {1}); rows need key, at and doc")]
    NoColumn(&'static str, String),
}

/// Why an import from a git repository or a SQLite query stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// Refused before anything was written.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// Reading the source failed partway (git failed, a SQL error while stepping the
    /// rows). What `recorded` says is committed and stays.
    #[error("{message}")]
    Read {
        /// What failed.
        message: String,
        /// What is recorded for good.
        recorded: SourceSummary,
    },
    /// An item that cannot be imported (a row without a valid key, time or actor), or that
    /// the store refused (a time before a newer transaction another process wrote meanwhile).
    #[error("{place}: {problem}")]
    Item {
        /// Which item.
        place: String,
        /// What is wrong with it.
        problem: RecordError,
        /// What is recorded for good.
        recorded: SourceSummary,
    },
    /// The store failed to write or commit. What `recorded` says is committed and stays.
    #[error("{error}")]
    Store {
        /// What failed.
        error: Box<Error>,
        /// What is recorded for good.
        recorded: SourceSummary,
    },
}

impl SourceError {
    /// What the import recorded for good before it stopped (nothing when it was refused).
    pub fn recorded(&self) -> SourceSummary {
        match self {
            Self::Refused(_) => SourceSummary::default(),
            Self::Read { recorded, .. }
            | Self::Item { recorded, .. }
            | Self::Store { recorded, .. } => *recorded,
        }
    }

    /// A store failure, with what was recorded.
    pub(crate) fn store(error: Error, recorded: SourceSummary) -> Self {
        Self::Store {
            error: Box::new(error),
            recorded,
        }
    }
}

/// Times that never go backwards: one earlier than the one before it is raised to it.
#[derive(Debug, Default)]
pub(crate) struct Raise {
    /// The newest time given so far.
    floor: Option<Timestamp>,
    /// How many were raised.
    pub(crate) raised: u64,
}

impl Raise {
    /// Times from `floor` on (where an earlier import got to).
    pub(crate) fn from(floor: Option<Timestamp>) -> Self {
        Self { floor, raised: 0 }
    }

    /// `at`, or the newest time before it if that is later.
    pub(crate) fn at(&mut self, at: Timestamp) -> Timestamp {
        match self.floor {
            Some(floor) if at < floor => {
                self.raised += 1;
                floor
            }
            _ => {
                self.floor = Some(at);
                at
            }
        }
    }

    /// The newest time given so far.
    pub(crate) fn floor(&self) -> Option<Timestamp> {
        self.floor
    }
}

/// An import from a git repository or a SQLite query under way: the batched ingest, the
/// times raised, and what is recorded and committed (the part both sources share).
pub(crate) struct SourceRun<'r> {
    batches: Batches<'r>,
    raise: Raise,
    /// Items read and skipped so far.
    summary: SourceSummary,
    /// What the batches committed so far hold.
    committed: SourceSummary,
}

impl<'r> SourceRun<'r> {
    /// Begins the first batch, with times raised from `floor` on (where an earlier import
    /// got to).
    pub(crate) fn begin(
        repo: &'r mut Repo,
        now: Timestamp,
        options: &ImportOptions,
        floor: Option<Timestamp>,
    ) -> Result<Self, SourceError> {
        Ok(Self {
            batches: Batches::begin(repo, now, options)
                .map_err(|e| SourceError::store(e, SourceSummary::default()))?,
            raise: Raise::from(floor),
            summary: SourceSummary::default(),
            committed: SourceSummary::default(),
        })
    }

    /// The repository, for what a source records with the batch.
    pub(crate) fn repo(&self) -> &Repo {
        self.batches.repo()
    }

    /// What the batches committed so far hold: what an error reports as recorded.
    pub(crate) fn committed(&self) -> SourceSummary {
        self.committed
    }

    /// What is recorded now, the open batch included.
    fn tally(&self) -> SourceSummary {
        SourceSummary {
            snapshots: self.batches.recorded(),
            raised: self.raise.raised,
            ..self.summary
        }
    }

    /// The time to record the next item read at (`at`, or later: [`Raise`]); the first
    /// one is refused if it precedes the repository's newest transaction (`place` names
    /// the item). The batch holds the write lock: nothing can be written between this
    /// check and the first snapshot.
    pub(crate) fn read(
        &mut self,
        at: Timestamp,
        place: impl FnOnce() -> String,
    ) -> Result<Timestamp, SourceError> {
        let at = self.raise.at(at);
        if self.summary.read == 0 {
            let newest = self
                .repo()
                .newest_tx()
                .map_err(|e| SourceError::store(e, self.committed))?;
            if let Some(tx) = newest.filter(|tx| at < tx.at) {
                return Err(Refusal::BeforeNewest {
                    first: at,
                    place: place(),
                    tx: tx.id,
                    newest: tx.at,
                }
                .into());
            }
        }
        self.summary.read += 1;
        Ok(at)
    }

    /// The newest time read so far.
    pub(crate) fn floor(&self) -> Option<Timestamp> {
        self.raise.floor()
    }

    /// Skips an item (or a version in it), with a warning.
    pub(crate) fn skip(&mut self, warn: &mut impl FnMut(&str), message: &str) {
        self.summary.skipped += 1;
        warn(message);
    }

    /// Records `snapshot`; a document that is not JSON is skipped with a warning (`what`
    /// names it: `feed.json`, `doc`), anything else wrong stops the import at `place`.
    pub(crate) fn ingest(
        &mut self,
        snapshot: &Snapshot<'_>,
        what: &str,
        place: &str,
        warn: &mut impl FnMut(&str),
    ) -> Result<(), SourceError> {
        match self.batches.ingest(snapshot, &mut *warn) {
            Ok(_) => Ok(()),
            Err(Error::Json { source, .. }) => {
                self.skip(
                    warn,
                    &format!("{what} is not valid JSON ({source}); skipped"),
                );
                Ok(())
            }
            Err(e) => Err(self.item(place, RecordError::Refused(Box::new(e)))),
        }
    }

    /// The error for an item that cannot be imported.
    pub(crate) fn item(&self, place: &str, problem: RecordError) -> SourceError {
        SourceError::Item {
            place: place.to_owned(),
            problem,
            recorded: self.committed,
        }
    }

    /// True once the open batch is due to be committed.
    pub(crate) fn full(&self) -> bool {
        self.batches.full()
    }

    /// Reports the item just read as done, then commits the open batch if it is due.
    pub(crate) fn done(
        &mut self,
        progress: &mut impl FnMut(SourceEvent<'_>),
    ) -> Result<(), SourceError> {
        progress(SourceEvent::Read {
            done: self.summary.read,
        });
        if self.full() {
            self.commit(progress)?;
        }
        Ok(())
    }

    /// Commits the open batch (and begins the next), then reports it.
    pub(crate) fn commit(
        &mut self,
        progress: &mut impl FnMut(SourceEvent<'_>),
    ) -> Result<(), SourceError> {
        let tally = self.tally();
        self.batches
            .commit()
            .map_err(|e| SourceError::store(e, self.committed))?;
        self.committed = tally;
        progress(SourceEvent::Committed {
            done: tally.read,
            summary: &tally.snapshots,
        });
        Ok(())
    }

    /// Commits the last batch, reports it, and returns what the import did.
    pub(crate) fn finish(
        self,
        progress: &mut impl FnMut(SourceEvent<'_>),
    ) -> Result<SourceSummary, SourceError> {
        let tally = self.tally();
        let committed = self.committed;
        self.batches
            .finish()
            .map_err(|e| SourceError::store(e, committed))?;
        progress(SourceEvent::Committed {
            done: tally.read,
            summary: &tally.snapshots,
        });
        Ok(tally)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_never_go_backwards() {
        let mut raise = Raise::from(Some(Timestamp(10)));
        let got: Vec<i64> = [5, 10, 20, 15, 30]
            .iter()
            .map(|&t| raise.at(Timestamp(t)).0)
            .collect();
        assert_eq!(got, [10, 10, 20, 20, 30]);
        assert_eq!(raise.raised, 2);
        assert_eq!(raise.floor(), Some(Timestamp(30)));
        assert_eq!(Raise::default().at(Timestamp(-5)), Timestamp(-5));
    }
}
