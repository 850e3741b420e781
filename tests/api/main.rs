//! Library API tests.
#![allow(clippy::unwrap_used)]

mod asof;
mod canon;
mod patch_conformance;
mod path;
