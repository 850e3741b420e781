//! Library API tests.
#![allow(clippy::unwrap_used)]

mod diff_apply;
mod path;
