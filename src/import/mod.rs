//! Import: many snapshots from another history, batched.
//!
//! Every source is read as a stream of snapshots (key, time, actor, reason, document as
//! text), each ingested as its own `ingest` transaction with the rules of
//! [`Txn::put_json`](crate::Txn::put_json), committed to SQLite in batches
//! ([`ImportOptions::batch`] snapshots or [`ImportOptions::batch_bytes`] bytes of documents
//! per commit, one sync for many snapshots). One batched ingest (`Batches`) serves them all:
//!
//! - NDJSON ([`Repo::import_ndjson`]): each line is a record `{"key": K, "at": TIME,
//!   "actor": A, "reason": R, "doc": {...}}` (`reason` optional; `at` optional, the
//!   transaction's time otherwise; other members ignored). A bad record stops the import at
//!   its line: every snapshot before it stays recorded ([`ImportError::recorded`] says how
//!   many), nothing after it is.
//! - a git repository ([`Repo::import_git`], module [`git`]): every version of some files
//!   along a branch's first-parent history, resumable.
//! - a SQLite query ([`Repo::import_sqlite`], module [`sqlite`]): rows of stored
//!   documents, in time order.
//!
//! The last two share their events ([`SourceEvent`]), summary ([`SourceSummary`]) and
//! errors ([`SourceError`]); both skip a document that is not JSON with a warning, and
//! both raise a time earlier than the one before it (time never goes backwards in a
//! repository).

pub mod git;
mod source;
pub mod sqlite;

pub use source::{Refusal, SourceError, SourceEvent, SourceSummary};

use crate::canon::ParseError;
use crate::canon::Value;
use crate::error::Error;
use crate::model::{Actor, ActorError};
use crate::repo::{Repo, TxOptions};
use crate::time::{Timestamp, When};
use crate::txn::PutOutcome;

/// How an import batches its commits.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ImportOptions {
    /// Snapshots per SQLite commit at most (at least 1; default 500).
    pub batch: usize,
    /// Bytes of snapshot text per SQLite commit at most (default 16 MiB): a batch of large
    /// documents is committed sooner, so what a batch holds in memory and in the WAL, and
    /// what an interrupted import has to redo, stays bounded.
    pub batch_bytes: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self {
            batch: 500,
            batch_bytes: 16 << 20,
        }
    }
}

impl ImportOptions {
    /// With `batch` snapshots per SQLite commit (0 counts as 1).
    #[must_use]
    pub fn batch(mut self, batch: usize) -> Self {
        self.batch = batch;
        self
    }

    /// With a batch committed once its snapshots reach `bytes` bytes of text.
    #[must_use]
    pub fn batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = bytes;
        self
    }
}

/// What an import recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Snapshots that changed their document.
    pub changed: usize,
    /// Snapshots equal to the document they found: only a check was recorded.
    pub unchanged: usize,
    /// Changes recorded by the changed snapshots.
    pub changes: usize,
}

impl ImportSummary {
    /// Snapshots recorded, changed or not.
    pub fn snapshots(&self) -> usize {
        self.changed + self.unchanged
    }

    fn add(&mut self, outcome: &PutOutcome) {
        match outcome {
            PutOutcome::Unchanged => self.unchanged += 1,
            PutOutcome::Changed(n) => {
                self.changed += 1;
                self.changes += n;
            }
        }
    }
}

/// What [`Repo::import_ndjson`] reports as it goes (lines count from 1).
#[derive(Debug)]
#[non_exhaustive]
pub enum ImportEvent<'a> {
    /// A warning about the snapshot on `line`: an array whose keys are not unique was
    /// recorded as one opaque value. Reported before the snapshot's `Recorded`.
    Warning {
        /// The record's line.
        line: usize,
        /// One sentence.
        message: &'a str,
    },
    /// The snapshot on `line` was recorded (committed with its batch).
    Recorded {
        /// The record's line.
        line: usize,
        /// The document's key.
        key: &'a str,
        /// Changed or not.
        outcome: &'a PutOutcome,
    },
}

/// What is wrong with a record.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The line, or the document in it, is not valid JSON (positions in the line).
    #[error("not valid JSON: {0}")]
    Json(ParseError),
    /// No `"key"` member holding a string.
    #[error("no \"key\" string")]
    NoKey,
    /// No `"doc"` member.
    #[error("no \"doc\"")]
    NoDoc,
    /// The line is not UTF-8 text.
    #[error("the line is not UTF-8 text")]
    NotUtf8,
    /// An `"at"` that is not a time (its JSON text).
    #[error("\"at\" is not a time: {0}")]
    At(String),
    /// A missing or malformed `"actor"`.
    #[error(transparent)]
    Actor(ActorError),
    /// The store refused or failed to record the snapshot (a bad key, an `"at"` before
    /// the newest transaction, …). Boxed: the error of a whole import stays small.
    #[error(transparent)]
    Refused(Box<Error>),
}

/// Why an import stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// A record that cannot be imported. Every snapshot before it is recorded.
    #[error("line {line}: {problem}")]
    Record {
        /// Its line (from 1).
        line: usize,
        /// What is wrong with it.
        problem: RecordError,
        /// What was recorded before it.
        recorded: ImportSummary,
    },
    /// The store failed to begin or commit a batch: the snapshots of that batch are not
    /// recorded, those of the batches committed before are.
    #[error("{error}")]
    Store {
        /// What failed.
        error: Error,
        /// What is recorded (the batches committed before).
        recorded: ImportSummary,
    },
    /// The input could not be read at `line` (every snapshot before it is recorded).
    #[error("line {line}: {error}")]
    Read {
        /// The line being read (from 1).
        line: usize,
        /// What failed.
        error: std::io::Error,
        /// What was recorded before it.
        recorded: ImportSummary,
    },
}

impl ImportError {
    /// What the import recorded before it stopped: that stays recorded.
    pub fn recorded(&self) -> ImportSummary {
        match self {
            Self::Record { recorded, .. }
            | Self::Store { recorded, .. }
            | Self::Read { recorded, .. } => *recorded,
        }
    }
}

/// One NDJSON record, its document left as text. Other members are ignored.
#[derive(Default)]
struct Record<'a> {
    key: Option<Value>,
    at: Option<Value>,
    actor: Option<Value>,
    reason: Option<Value>,
    doc: Option<&'a str>,
}

impl<'a> Record<'a> {
    /// Reads a record's envelope; its document stays text.
    fn read(line: &'a str) -> Result<Self, ParseError> {
        let mut record = Record::default();
        for (name, text) in crate::canon::object_members(line)? {
            // `null` is no value, for the document too: `"doc": null` is no "doc".
            if text == "null" {
                continue;
            }
            let slot = match name.as_str() {
                "doc" => {
                    record.doc = Some(text);
                    continue;
                }
                "key" => &mut record.key,
                "at" => &mut record.at,
                "actor" => &mut record.actor,
                "reason" => &mut record.reason,
                _ => continue,
            };
            *slot = Some(crate::canon::parse_str(text).map_err(|e| in_line(e, line, text))?);
        }
        Ok(record)
    }
}

/// An error in `part`, a slice of `line`, placed in the line.
fn in_line(mut e: ParseError, line: &str, part: &str) -> ParseError {
    if e.line == 1 {
        let offset = (part.as_ptr() as usize).saturating_sub(line.as_ptr() as usize);
        e.column += line.get(..offset).map_or(0, |s| s.chars().count());
    }
    e
}

/// One snapshot to record, as a source read it.
pub(crate) struct Snapshot<'a> {
    pub(crate) key: &'a str,
    /// Its time (`None`: the transaction's).
    pub(crate) at: Option<Timestamp>,
    pub(crate) actor: &'a Actor,
    pub(crate) reason: Option<&'a str>,
    /// The document, JSON text as read (parsed strictly once, by `put_json`).
    pub(crate) doc: &'a [u8],
}

/// The batched ingest every import feeds: each snapshot its own `ingest` transaction (a
/// savepoint of the batch), the batch committed once it holds [`ImportOptions::batch`]
/// snapshots or [`ImportOptions::batch_bytes`] bytes, when its source says
/// ([`Batches::commit`]). Dropped without [`Batches::finish`], the open batch is rolled
/// back: what was committed before stays.
pub(crate) struct Batches<'r> {
    repo: &'r mut Repo,
    now: Timestamp,
    options: ImportOptions,
    /// Snapshots and bytes in the open batch.
    open: usize,
    open_bytes: usize,
    /// What is committed, and what is recorded with the open batch too.
    committed: ImportSummary,
    recorded: ImportSummary,
}

impl<'r> Batches<'r> {
    /// Begins the first batch (a batch begun by the caller is committed with it).
    pub(crate) fn begin(
        repo: &'r mut Repo,
        now: Timestamp,
        options: &ImportOptions,
    ) -> Result<Self, Error> {
        repo.begin_batch()?;
        Ok(Self {
            repo,
            now,
            options: options.clone(),
            open: 0,
            open_bytes: 0,
            committed: ImportSummary::default(),
            recorded: ImportSummary::default(),
        })
    }

    /// The repository, for reads and for what a source records with the batch.
    pub(crate) fn repo(&self) -> &Repo {
        self.repo
    }

    /// What is committed.
    pub(crate) fn committed(&self) -> ImportSummary {
        self.committed
    }

    /// What is recorded, the open batch included.
    pub(crate) fn recorded(&self) -> ImportSummary {
        self.recorded
    }

    /// Records `snapshot` as one `ingest` transaction; `warn` hears its warnings (an array
    /// recorded as one opaque value). A snapshot that fails records nothing.
    pub(crate) fn ingest(
        &mut self,
        snapshot: &Snapshot<'_>,
        mut warn: impl FnMut(&str),
    ) -> Result<PutOutcome, Error> {
        let opts = TxOptions::new(snapshot.actor.clone(), "ingest", self.now)
            .reason(snapshot.reason.map(str::to_owned))
            .at(snapshot.at);
        let mut txn = self.repo.begin(opts)?;
        let outcome = txn.put_json(snapshot.key, snapshot.doc)?;
        let commit = txn.commit()?;
        for w in &commit.warnings {
            warn(w);
        }
        self.recorded.add(&outcome);
        self.open += 1;
        self.open_bytes = self.open_bytes.saturating_add(snapshot.doc.len());
        Ok(outcome)
    }

    /// True once the open batch is due to be committed.
    pub(crate) fn full(&self) -> bool {
        self.open >= self.options.batch.max(1) || self.open_bytes >= self.options.batch_bytes
    }

    /// Commits the open batch and begins the next.
    pub(crate) fn commit(&mut self) -> Result<(), Error> {
        self.repo.commit_batch()?;
        self.committed = self.recorded;
        self.open = 0;
        self.open_bytes = 0;
        self.repo.begin_batch()
    }

    /// Commits the open batch: everything recorded is committed.
    pub(crate) fn finish(mut self) -> Result<ImportSummary, Error> {
        self.repo.commit_batch()?;
        self.committed = self.recorded;
        Ok(self.recorded)
    }
}

impl Drop for Batches<'_> {
    fn drop(&mut self) {
        // Not finished: an error stopped the import. The open batch goes; a failed rollback
        // leaves it to SQLite, which rolls back whatever is not committed.
        let _ = self.repo.rollback_batch();
    }
}

impl Repo {
    /// Records the snapshots of the NDJSON `input` (see the [module doc](crate::import)),
    /// one `ingest` transaction each at `now` (or at the record's `"at"`), committed in
    /// batches. The input is read a line at a time: memory does not grow with its length.
    /// Blank lines are skipped. `progress` hears of each snapshot recorded and of each
    /// warning. A batch begun by the caller ([`Repo::begin_batch`]) is committed with the
    /// first one.
    ///
    /// A bad record (a line that is not UTF-8 among them) stops the import with
    /// [`ImportError::Record`] (its line), and a failure to read with [`ImportError::Read`];
    /// the snapshots before it are committed and stay recorded.
    pub fn import_ndjson(
        &mut self,
        mut input: impl std::io::BufRead,
        now: Timestamp,
        options: &ImportOptions,
        mut progress: impl FnMut(ImportEvent<'_>),
    ) -> Result<ImportSummary, ImportError> {
        let store = |error, recorded| ImportError::Store { error, recorded };
        let mut batches =
            Batches::begin(self, now, options).map_err(|e| store(e, ImportSummary::default()))?;
        let mut buf = Vec::new();
        let mut lineno = 0;
        loop {
            lineno += 1;
            buf.clear();
            let warn = |message: &str| {
                progress(ImportEvent::Warning {
                    line: lineno,
                    message,
                });
            };
            let imported = match input.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => match std::str::from_utf8(&buf) {
                    Ok(line) => {
                        let line = line.strip_suffix('\n').unwrap_or(line);
                        let line = line.strip_suffix('\r').unwrap_or(line);
                        if line.trim().is_empty() {
                            continue;
                        }
                        import_record(&mut batches, line, warn).map_err(Stop::Record)
                    }
                    Err(_) => Err(Stop::Record(RecordError::NotUtf8)),
                },
                Err(error) => Err(Stop::Read(error)),
            };
            match imported {
                Ok((key, outcome)) => progress(ImportEvent::Recorded {
                    line: lineno,
                    key: &key,
                    outcome: &outcome,
                }),
                Err(stop) => {
                    // Whatever was recorded before a bad record stays recorded.
                    let committed = batches.committed();
                    let recorded = batches.finish().map_err(|e| store(e, committed))?;
                    return Err(match stop {
                        Stop::Read(error) => ImportError::Read {
                            line: lineno,
                            error,
                            recorded,
                        },
                        Stop::Record(problem) => ImportError::Record {
                            line: lineno,
                            problem,
                            recorded,
                        },
                    });
                }
            }
            if batches.full() {
                let committed = batches.committed();
                batches.commit().map_err(|e| store(e, committed))?;
            }
        }
        let committed = batches.committed();
        batches.finish().map_err(|e| store(e, committed))
    }
}

/// Why an NDJSON import stops at a line.
enum Stop {
    /// The input could not be read.
    Read(std::io::Error),
    /// The record is bad.
    Record(RecordError),
}

/// Records the snapshot of one NDJSON record (`line`, not blank): its key and what it found.
fn import_record(
    batches: &mut Batches<'_>,
    line: &str,
    warn: impl FnMut(&str),
) -> Result<(String, PutOutcome), RecordError> {
    // The envelope is read here; the document, still text, is parsed strictly once, by
    // `put_json`, straight into its canonical text (no tree of it is built).
    let record = Record::read(line).map_err(RecordError::Json)?;
    let text = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).map(str::to_owned);
    let key = text(&record.key).ok_or(RecordError::NoKey)?;
    let actor =
        Actor::parse(&text(&record.actor).unwrap_or_default()).map_err(RecordError::Actor)?;
    let at = match record.at {
        None => None,
        Some(v) => match v.as_str().map(When::parse) {
            Some(Ok(When::At(ts))) => Some(ts),
            _ => return Err(RecordError::At(v.to_string())),
        },
    };
    let doc = record.doc.ok_or(RecordError::NoDoc)?;
    let reason = text(&record.reason);
    let snapshot = Snapshot {
        key: &key,
        at,
        actor: &actor,
        reason: reason.as_deref(),
        doc: doc.as_bytes(),
    };
    let outcome = batches.ingest(&snapshot, warn).map_err(|e| match e {
        // Positions in the line, not in the document.
        Error::Json { source, .. } => RecordError::Json(in_line(source, line, doc)),
        e => RecordError::Refused(Box::new(e)),
    })?;
    Ok((key, outcome))
}
