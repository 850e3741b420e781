//! Library API tests.
#![allow(clippy::unwrap_used)]

mod asof;
mod blame;
mod canon;
mod canon_text;
mod compare;
mod diff_apply;
mod export;
mod gc;
mod import;
mod layers;
mod patch_conformance;
mod path;
mod rename;
mod segments;
mod textdiff;
mod track;
