//! Library API tests.
#![allow(clippy::unwrap_used)]

mod path;
mod track;
