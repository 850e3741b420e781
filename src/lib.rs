//! hist: a history-first document store.
//!
//! The field-level change record (actor, time, transaction, key, path, old value, new value,
//! reason) is the primary object; current state is a view the store maintains from it.
//! Open a [`Repo`], write through a [`Txn`] that names an [`Actor`], and read any document
//! as of any point ([`Repo::as_of`]), the history of one field ([`Repo::history`]) or the
//! log ([`Repo::log`]).
//!
//! Everything the `hist` command does goes through this API: snapshots in bulk
//! ([`Repo::import_ndjson`]), the changes between two moments ([`Repo::diff`], as an RFC 6902
//! patch with [`DocDiff::to_json_patch`]), the log as a stream ([`Repo::export`]), a
//! directory of files ([`Repo::track`]). The command line is the package's binary, built
//! with the default `cli` feature: a program that embeds the library depends on it with
//! `default-features = false` and gets no command-line or terminal crate.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

/// `serde_json::json!`, converted to a [`canon::Value`]: for the library's own tests.
#[cfg(test)]
macro_rules! json {
    ($($t:tt)+) => {
        $crate::canon::Value::from(serde_json::json!($($t)+))
    };
}

mod asof;
pub mod blame;
pub mod canon;
mod compare;
pub mod diff;
mod error;
mod export;
mod fsck;
mod gc;
mod history;
pub mod import;
mod leaves;
mod log;
mod ls;
pub mod model;
pub mod patch;
pub mod path;
mod personal;
pub mod records;
mod rename;
mod replay;
mod repo;
pub mod retention;
pub mod rules;
pub mod shred;
mod sql;
mod stats;
mod store;
pub mod textdiff;
pub mod time;
mod timeline;
pub mod track;
mod txn;

pub use asof::{AsOf, AsOfText, Direction};
pub use blame::{Blame, BlameLeaf, BlameLine, BlameReads, Setter};
pub use compare::DocDiff;
pub use error::{Error, ErrorClass, QueryError, RenameError, Result, RuleError};
pub use export::ExportFilter;
pub use fsck::FsckReport;
pub use gc::{GcOutcome, GcPlan};
pub use history::{HistoryEntry, Moved};
pub use log::{LogEntry, LogFilter};
pub use ls::{ListedKey, LsFilter};
pub use model::{Actor, Change, ChangeText, LoggedChange, Op, TxInfo};
pub use path::DocPath;
pub use personal::{Backup, Forgotten, KeysProtected};
pub use repo::{HIST_DIR, Repo, TxOptions};
pub use retention::Compaction;
pub use rules::Rename;
pub use shred::ShredError;
pub use sql::{QueryResult, SqlValue};
pub use stats::{KeyStats, PathStats, StatsFilter};
pub use store::checkpoint::{CHECKPOINT_EVERY, CHECKPOINT_MIN_BYTES, checkpoint_span};
pub use time::{Timestamp, When};
pub use timeline::{Lane, Mark, Timeline, TimelineOptions, TimelineTx};
pub use txn::{PutOutcome, Txn, Written};
