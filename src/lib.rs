//! hist: a history-first document store.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod canon;
pub mod path;
