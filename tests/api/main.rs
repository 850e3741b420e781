//! Library API tests.
#![allow(clippy::unwrap_used)]

/// `serde_json::json!`, as a `hist::canon::Value` (its numbers converted exactly).
macro_rules! json {
    ($($t:tt)+) => {
        hist::canon::Value::from(serde_json::json!($($t)+))
    };
}

mod asof;
mod blame;
mod canon;
mod canon_text;
mod compare;
mod diff_apply;
mod embedding;
mod export;
mod gc;
mod import;
mod import_git;
mod layers;
mod long_lived;
mod ls;
mod patch_conformance;
mod path;
mod rename;
mod segments;
mod stats;
mod textdiff;
mod track;
