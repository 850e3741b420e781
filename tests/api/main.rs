//! Library API tests.
#![allow(clippy::unwrap_used)]

mod blame;
mod export;
mod path;
