//! Import: many snapshots from NDJSON, one record per line, batched.
//!
//! Each line of the input is a record `{"key": K, "at": TIME, "actor": A, "reason": R,
//! "doc": {...}}` (`reason` optional; `at` optional, the transaction's time otherwise; other
//! members ignored). [`Repo::import_ndjson`] ingests the records in order, each as its own
//! `ingest` transaction with the rules of [`Txn::put_json`](crate::Txn::put_json), and
//! commits them to SQLite in batches ([`ImportOptions::batch`] snapshots per commit, one
//! sync for many snapshots). A bad record stops the import at its line: every snapshot
//! before it stays recorded ([`ImportError::recorded`] says how many), nothing after it is.

use crate::canon::ParseError;
use crate::canon::Value;
use crate::error::Error;
use crate::model::{Actor, ActorError};
use crate::repo::{Repo, TxOptions};
use crate::time::{Timestamp, When};
use crate::txn::PutOutcome;

/// How [`Repo::import_ndjson`] imports.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ImportOptions {
    /// Snapshots per SQLite commit (at least 1; default 500).
    pub batch: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self { batch: 500 }
    }
}

impl ImportOptions {
    /// With `batch` snapshots per SQLite commit (0 counts as 1).
    #[must_use]
    pub fn batch(mut self, batch: usize) -> Self {
        self.batch = batch;
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
}

impl ImportError {
    /// What the import recorded before it stopped: that stays recorded.
    pub fn recorded(&self) -> ImportSummary {
        match self {
            Self::Record { recorded, .. } | Self::Store { recorded, .. } => *recorded,
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

impl Repo {
    /// Records the snapshots of the NDJSON `text` (see the [module doc](crate::import)),
    /// one `ingest` transaction each at `now` (or at the record's `"at"`), committed in
    /// batches. Blank lines are skipped. `progress` hears of each snapshot recorded and of
    /// each warning. A batch begun by the caller ([`Repo::begin_batch`]) is committed with
    /// the first one.
    ///
    /// A bad record stops the import with [`ImportError::Record`] (its line); the snapshots
    /// before it are committed and stay recorded.
    pub fn import_ndjson(
        &mut self,
        text: &str,
        now: Timestamp,
        options: &ImportOptions,
        mut progress: impl FnMut(ImportEvent<'_>),
    ) -> Result<ImportSummary, ImportError> {
        let batch = options.batch.max(1);
        // What is committed, and what is recorded in the batch still open.
        let mut committed = ImportSummary::default();
        let mut recorded = ImportSummary::default();
        let store = |error, recorded| ImportError::Store { error, recorded };
        self.begin_batch().map_err(|e| store(e, committed))?;
        for (i, line) in text.lines().enumerate() {
            let lineno = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let (key, outcome) = match self.import_record(line, now, |message| {
                progress(ImportEvent::Warning {
                    line: lineno,
                    message,
                });
            }) {
                Ok(done) => done,
                Err(problem) => {
                    // Whatever was recorded before a bad record stays recorded.
                    self.commit_batch().map_err(|e| store(e, committed))?;
                    return Err(ImportError::Record {
                        line: lineno,
                        problem,
                        recorded,
                    });
                }
            };
            recorded.add(&outcome);
            progress(ImportEvent::Recorded {
                line: lineno,
                key: &key,
                outcome: &outcome,
            });
            if recorded.snapshots() - committed.snapshots() >= batch {
                self.commit_batch().map_err(|e| store(e, committed))?;
                committed = recorded;
                self.begin_batch().map_err(|e| store(e, committed))?;
            }
        }
        self.commit_batch().map_err(|e| store(e, committed))?;
        Ok(recorded)
    }

    /// Records the snapshot of one record (`line`, not blank): its key and what it found.
    fn import_record(
        &mut self,
        line: &str,
        now: Timestamp,
        mut warn: impl FnMut(&str),
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
        let opts = TxOptions::new(actor, "ingest", now)
            .reason(text(&record.reason))
            .at(at);
        let mut txn = self.begin(opts).map_err(refused)?;
        let outcome = txn.put_json(&key, doc.as_bytes()).map_err(|e| match e {
            // Positions in the line, not in the document.
            Error::Json { source, .. } => RecordError::Json(in_line(source, line, doc)),
            e => refused(e),
        })?;
        let commit = txn.commit().map_err(refused)?;
        for w in &commit.warnings {
            warn(w);
        }
        Ok((key, outcome))
    }
}

fn refused(e: Error) -> RecordError {
    RecordError::Refused(Box::new(e))
}
