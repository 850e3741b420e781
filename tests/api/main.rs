//! Library API tests.
#![allow(clippy::unwrap_used)]

mod asof;
mod patch_conformance;
mod path;
