//! hist: a history-first document store.
//!
//! The field-level change record (actor, time, transaction, key, path, old value, new value,
//! reason) is the primary object; current state is a view the store maintains from it.
//! Open a [`Repo`], write through a [`Txn`] that names an [`Actor`], and read any document
//! as of any point ([`Repo::as_of`]), the history of one field ([`Repo::history`]) or the
//! log ([`Repo::log`]).
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

pub mod blame;
pub mod canon;
pub mod cli;
pub mod diff;
mod error;
mod export;
mod fsck;
mod gc;
mod head;
pub mod model;
pub mod patch;
pub mod path;
mod read;
mod rename;
mod replay;
mod repo;
pub mod retention;
pub mod rules;
pub mod shred;
mod sql;
mod store;
pub mod textdiff;
pub mod time;
pub mod track;

pub use blame::{Blame, BlameLeaf, BlameLine, BlameReads, Setter};
pub use error::{Error, Result};
pub use export::ExportFilter;
pub use fsck::FsckReport;
pub use gc::{Compaction, GcOutcome, GcPlan};
pub use model::{Actor, Change, ChangeText, LoggedChange, Op, TxInfo};
pub use path::DocPath;
pub use read::{AsOf, AsOfText, Direction, HistoryEntry, LogEntry, LogFilter, Moved};
pub use rename::Rename;
pub use repo::{
    CHECKPOINT_EVERY, CHECKPOINT_MIN_BYTES, Commit, HIST_DIR, PutOutcome, Repo, TxOptions, Txn,
    checkpoint_span,
};
pub use shred::{Backup, Forgotten, ShredError};
pub use sql::{QueryResult, SqlValue};
pub use time::{Timestamp, When};
