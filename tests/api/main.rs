//! Library API tests.
#![allow(clippy::unwrap_used)]

mod gc;
mod path;
mod rename;
